//! An H3C Comware 7 switch as a state machine, written from the H3C
//! Fundamentals Configuration Guide and Command Reference ("Configuration
//! file management": `save`, `configuration replace file`, `configuration
//! commit delay` / `configuration commit`; "File system management":
//! `mkdir`, `more`, `delete /unreserved`, `rmdir`; the SCP server): user and
//! system view prompts, `[Y/N]` questions, a flash file system written over
//! SCP, and a commit-delay timer that puts the configuration back by itself
//! when it runs out. The wording of messages follows the guides' examples
//! where they give one; where they do not (a refused line of a replace, a
//! commit without a pending delay) it is ours and starts with `%`, as
//! Comware's errors do.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::ssh_server::{Reply, Script};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    User,
    System,
}

#[derive(Debug, Clone)]
enum Question {
    Save(String),
    Delete(String),
    Rmdir(String),
    Replace(String),
}

pub struct ComwareState {
    pub sysname: String,
    pub running: String,
    pub saved: String,
    pub files: BTreeMap<String, String>,
    pub dirs: BTreeSet<String>,
    pub view: View,
    question: Option<Question>,
    /// Deadline and the configuration to go back to.
    pub delay: Option<(Instant, String)>,
    /// How long one minute of `configuration commit delay` lasts here.
    pub minute: Duration,
    /// How many times the timer rolled back.
    pub timer_rollbacks: usize,
    /// Drop the connection after applying `configuration replace file`.
    pub drop_on_replace: bool,
    /// What `mkdir` of an existing directory answers, when not the
    /// default wording (ours: the guides give no example of it).
    pub mkdir_exists: Option<String>,
    pub lldp: String,
    pub brief: String,
    pub bgp: String,
    pub bfd: String,
    pub routes: String,
}

/// A running configuration as `display current-configuration` prints it:
/// what a switch has before any push (management, users, SSH, an old
/// VPN instance and address on a fabric port).
pub fn factory(sysname: &str) -> String {
    format!(
        "#\n version 7.1.070, Release 6710\n#\n sysname {sysname}\n#\n ip route-static vpn-instance mgmt 0.0.0.0 0 192.0.2.1\n ip route-static vpn-instance Vrf101 10.9.0.0 16 10.255.0.9\n\
#\nip vpn-instance mgmt\n#\nip vpn-instance Vrf101\n description old\n\
#\ninterface HundredGigE1/0/1\n port link-mode route\n ip binding vpn-instance Vrf101\n ip address 10.255.0.0 255.255.255.254\n mtu 1500\n\
#\ninterface M-GigabitEthernet0/0/0\n ip binding vpn-instance mgmt\n ip address 192.0.2.10 255.255.255.0\n\
#\n ssh server enable\n scp server enable\n#\nlocal-user admin class manage\n service-type ssh\n authorization-attribute user-role network-admin\n\
#\nline vty 0 63\n authentication-mode scheme\n user-role network-operator\n#\nreturn\n"
    )
}

impl ComwareState {
    pub fn new(sysname: &str, minute: Duration) -> ComwareState {
        let running = factory(sysname);
        ComwareState {
            sysname: sysname.to_string(),
            saved: running.clone(),
            running,
            files: BTreeMap::new(),
            dirs: BTreeSet::from(["flash:".to_string()]),
            view: View::User,
            question: None,
            delay: None,
            minute,
            timer_rollbacks: 0,
            drop_on_replace: false,
            mkdir_exists: None,
            lldp: String::new(),
            brief: String::new(),
            bgp: String::new(),
            bfd: String::new(),
            routes: String::new(),
        }
    }

    /// The device's timer: past the deadline, the configuration goes back.
    pub fn tick(&mut self) {
        if let Some((deadline, before)) = &self.delay
            && Instant::now() >= *deadline
        {
            self.running = before.clone();
            self.delay = None;
            self.timer_rollbacks += 1;
        }
    }

    fn prompt(&self) -> String {
        match self.view {
            View::User => format!("<{}>", self.sysname),
            View::System => format!("[{}]", self.sysname),
        }
    }

    fn parent(path: &str) -> &str {
        path.rsplit_once('/').map(|(d, _)| d).unwrap_or("flash:")
    }

    /// Applies a configuration file. Lines Comware refuses (an MTU above
    /// 9216) fail; the others take effect, as a replace applies line by
    /// line.
    fn replace(&mut self, file: &str) -> String {
        let Some(text) = self.files.get(file).cloned() else {
            return format!("%The file {file} does not exist.");
        };
        let mut applied = String::new();
        let mut failed = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let bad = line
                .trim()
                .strip_prefix("mtu ")
                .and_then(|m| m.parse::<u32>().ok())
                .is_some_and(|m| m > 9216);
            if bad {
                failed.push(format!(
                    "%Failed to apply line {} ' {}' of {file}: Wrong parameter.",
                    n + 1,
                    line.trim()
                ));
            } else {
                applied.push_str(line);
                applied.push('\n');
            }
        }
        self.running = applied;
        if let Some(name) = self
            .running
            .lines()
            .find_map(|l| l.trim().strip_prefix("sysname "))
        {
            self.sysname = name.to_string();
        }
        if failed.is_empty() {
            "Now replacing the current configuration. Please wait...\nCurrent configuration has been successfully replaced.".to_string()
        } else {
            format!(
                "Now replacing the current configuration. Please wait...\n{}",
                failed.join("\n")
            )
        }
    }

    fn answer(&mut self, question: Question, yes: bool) -> Reply {
        match question {
            Question::Replace(file) => {
                // The question is whether to save first; either way the
                // replace goes on.
                if yes {
                    self.saved = self.running.clone();
                }
                let out = self.replace(&file);
                if self.drop_on_replace {
                    return Reply::dropped();
                }
                Reply::ok(out)
            }
            _ if !yes => Reply::ok(""),
            Question::Save(file) => {
                self.files.insert(file, self.running.clone());
                Reply::ok(
                    "Validating file. Please wait...\nSaved the current configuration to mainboard device successfully.",
                )
            }
            Question::Delete(file) => {
                self.files.remove(&file);
                Reply::ok(format!("Deleting file {file}... Done."))
            }
            Question::Rmdir(dir) => {
                if self.files.keys().any(|f| ComwareState::parent(f) == dir) {
                    return Reply::ok(format!(
                        "%Failed to remove directory {dir}: the directory is not empty."
                    ));
                }
                self.dirs.remove(&dir);
                Reply::ok(format!("Removing directory {dir}... Done."))
            }
        }
    }

    /// The routing table of the running `ip route-static` lines of a VPN
    /// instance (or the public network): one row per route, further
    /// next hops of the same destination on rows without one.
    fn static_table(&self, vrf: Option<&str>) -> String {
        let mut routes: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for line in self.running.lines() {
            let Some(rest) = line.trim().strip_prefix("ip route-static ") else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            let (here, f) = match f.as_slice() {
                ["vpn-instance", v, tail @ ..] => (Some(*v), tail.to_vec()),
                tail => (None, tail.to_vec()),
            };
            if here != vrf || f.len() < 3 {
                continue;
            }
            routes
                .entry(format!("{}/{}", f[0], f[1]))
                .or_default()
                .push(f[2].to_string());
        }
        let mut out = format!(
            "Destinations : {}        Routes : {}\n\nDestination/Mask   Proto   Pre Cost        NextHop         Interface\n",
            routes.len(),
            routes.values().map(Vec::len).sum::<usize>()
        );
        for (prefix, hops) in routes {
            for (i, hop) in hops.iter().enumerate() {
                let dest = if i == 0 { prefix.as_str() } else { "" };
                out.push_str(&format!(
                    "{dest:<18} Static  60  0           {hop:<15} HGE1/0/1\n"
                ));
            }
        }
        out
    }

    fn user_view(&mut self, line: &str) -> Reply {
        let unknown = || Reply::ok("% Unrecognized command found at '^' position.");
        if let Some(dir) = line.strip_prefix("mkdir ") {
            if self.dirs.contains(dir) {
                return Reply::ok(
                    self.mkdir_exists
                        .clone()
                        .unwrap_or_else(|| format!("%Directory {dir} already exists.")),
                );
            }
            self.dirs.insert(dir.to_string());
            return Reply::ok(format!("Creating directory {dir}... Done."));
        }
        if let Some(file) = line.strip_prefix("more ") {
            return match self.files.get(file) {
                Some(t) => Reply::ok(t.trim_end().to_string()),
                None => Reply::ok(format!("%The file {file} does not exist.")),
            };
        }
        if line == "save force" {
            self.saved = self.running.clone();
            return Reply::ok(
                "Validating file. Please wait...\nSaved the current configuration to mainboard device successfully.",
            );
        }
        if let Some(file) = line.strip_prefix("save ") {
            self.question = Some(Question::Save(file.to_string()));
            return Reply::ok(format!(
                "The current configuration will be saved to {file}. Continue? [Y/N]:"
            ));
        }
        if let Some(file) = line.strip_prefix("delete /unreserved ") {
            if !self.files.contains_key(file) {
                return Reply::ok(format!(
                    "%Failed to delete {file}: the file does not exist."
                ));
            }
            self.question = Some(Question::Delete(file.to_string()));
            return Reply::ok(format!(
                "The file cannot be restored. Delete {file}? [Y/N]:"
            ));
        }
        if let Some(dir) = line.strip_prefix("rmdir ") {
            if !self.dirs.contains(dir) {
                return Reply::ok(format!(
                    "%Failed to remove directory {dir}: the directory does not exist."
                ));
            }
            self.question = Some(Question::Rmdir(dir.to_string()));
            return Reply::ok(format!("Remove directory {dir}? [Y/N]:"));
        }
        match line {
            "screen-length disable" => Reply::ok(""),
            "system-view" => {
                self.view = View::System;
                Reply::ok("System View: return to User View with Ctrl+Z.")
            }
            "display current-configuration" => Reply::ok(self.running.trim_end().to_string()),
            "display current-configuration | include sysname" => Reply::ok(
                self.running
                    .lines()
                    .filter(|l| l.contains("sysname"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            "display device manuinfo" => Reply::ok(
                "Slot 1 CPU 0:\nDEVICE_NAME          : S9850-4C\nDEVICE_SERIAL_NUMBER : 210235A2CSH19C000012\nMAC_ADDRESS          : 0cda-411d-0001\nMANUFACTURING_DATE   : 2019-12-09\nVENDOR_NAME          : H3C",
            ),
            "display lldp neighbor-information list" => Reply::ok(self.lldp.clone()),
            "display interface brief" => Reply::ok(self.brief.clone()),
            "display bfd session" => Reply::ok(self.bfd.clone()),
            _ if line.starts_with("display bgp peer ipv4") => {
                if line == "display bgp peer ipv4 vpn-instance Vrf101" {
                    Reply::ok(self.bgp.clone())
                } else {
                    Reply::ok(
                        " BGP local router ID: 10.255.0.1\n Local AS number: 65001\n Total number of peers: 0                 Peers in established state: 0",
                    )
                }
            }
            _ if line.starts_with("display ip routing-table") => {
                if !self.routes.is_empty() && line == "display ip routing-table vpn-instance Vrf101"
                {
                    return Reply::ok(self.routes.clone());
                }
                let vrf = line.strip_prefix("display ip routing-table vpn-instance ");
                Reply::ok(self.static_table(vrf))
            }
            _ => unknown(),
        }
    }

    fn system_view(&mut self, line: &str) -> Reply {
        if let Some(n) = line.strip_prefix("configuration commit delay ") {
            let Ok(n) = n.parse::<u32>() else {
                return Reply::ok("% Wrong parameter found at '^' position.");
            };
            if !(1..=65535).contains(&n) {
                return Reply::ok("% Wrong parameter found at '^' position.");
            }
            if self.delay.is_some() {
                return Reply::ok("%A configuration commit delay is already in progress.");
            }
            self.delay = Some((Instant::now() + self.minute * n, self.running.clone()));
            return Reply::ok("");
        }
        if let Some(file) = line.strip_prefix("configuration replace file ") {
            self.question = Some(Question::Replace(file.to_string()));
            return Reply::ok(
                "Current configuration will be lost, save current configuration? [Y/N]:",
            );
        }
        match line {
            "configuration commit" => {
                if self.delay.take().is_none() {
                    return Reply::ok("%No configuration commit delay is in progress.");
                }
                Reply::ok("")
            }
            "return" | "quit" => {
                self.view = View::User;
                Reply::ok("")
            }
            _ => Reply::ok("% Unrecognized command found at '^' position."),
        }
    }
}

impl Script for ComwareState {
    fn reads_stdin(&self, command: &str) -> bool {
        command.starts_with("scp -t ")
    }

    /// The SCP sink: `C0644 <length> <name>\n`, the bytes, a zero byte;
    /// each step acknowledged with a zero byte.
    fn exec(&mut self, command: &str, stdin: &[u8]) -> Reply {
        self.tick();
        let Some(path) = command.strip_prefix("scp -t ") else {
            return Reply::fail(1, "% Unrecognized command found at '^' position.\n");
        };
        let refuse = |m: &str| Reply {
            stdout: format!("\0\u{1}scp: {m}\n"),
            status: 1,
            ..Reply::default()
        };
        let Some(nl) = stdin.iter().position(|&b| b == b'\n') else {
            return refuse("protocol error: no header");
        };
        let header = String::from_utf8_lossy(&stdin[..nl]).into_owned();
        let mut f = header.split_whitespace();
        let (Some(mode), Some(len), Some(_name)) = (f.next(), f.next(), f.next()) else {
            return refuse("protocol error: bad header");
        };
        let Ok(len) = len.parse::<usize>() else {
            return refuse("protocol error: bad length");
        };
        if !mode.starts_with('C') || stdin.len() != nl + 1 + len + 1 || stdin[nl + 1 + len] != 0 {
            return refuse("protocol error: bad body");
        }
        if !self.dirs.contains(ComwareState::parent(path)) {
            return refuse(&format!("{path}: No such file or directory"));
        }
        let body = String::from_utf8_lossy(&stdin[nl + 1..nl + 1 + len]).into_owned();
        self.files.insert(path.to_string(), body);
        Reply::ok("\0\0\0")
    }

    fn shell_open(&mut self) -> String {
        self.tick();
        self.view = View::User;
        format!(
            "\n******************************************************************************\n\
             * Copyright (c) 2004-2023 New H3C Technologies Co., Ltd. All rights reserved.*\n\
             ******************************************************************************\n\n{}",
            self.prompt()
        )
    }

    fn shell_line(&mut self, line: &str) -> Reply {
        self.tick();
        let mut reply = if let Some(q) = self.question.take() {
            let yes = match line.trim() {
                "Y" | "y" => true,
                "N" | "n" => false,
                _ => {
                    self.question = Some(q);
                    return Reply::ok("Please input Y or N. [Y/N]:");
                }
            };
            self.answer(q, yes)
        } else {
            match self.view {
                View::User => self.user_view(line.trim()),
                View::System => self.system_view(line.trim()),
            }
        };
        if reply.drop || self.question.is_some() {
            return reply;
        }
        if !reply.stdout.is_empty() {
            reply.stdout.push('\n');
        }
        reply.stdout.push_str(&self.prompt());
        reply
    }
}
