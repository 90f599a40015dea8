//! A SONiC switch as a state machine, written from sonic-utilities'
//! documented commands (`config/main.py`, `generic_config_updater/`, the
//! SONiC Command Reference) and a Debian shell's file commands:
//! CONFIG_DB (running) and the saved `config_db.json`, checkpoints, a small
//! file system under `/tmp`, YANG-style validation of a replace, and canned
//! verification outputs. Only the exact commands the docs give are known;
//! anything else is `command not found`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::ssh_server::{Reply, Script};

pub struct SonicState {
    pub running: Value,
    pub saved: Value,
    pub checkpoints: BTreeMap<String, Value>,
    pub files: BTreeMap<String, Vec<u8>>,
    pub dirs: BTreeSet<String>,
    /// Drop the connection after applying a (non dry-run) `config replace`.
    pub drop_on_replace: bool,
    pub serial: String,
    pub lldp_table: String,
    pub interfaces_status: String,
    pub bgp_json: String,
    pub bfd_json: String,
    /// `show ip route vrf all json`; `None`: the routes of the running
    /// `STATIC_ROUTE` table, installed as FRR shows them.
    pub routes_json: Option<String>,
    /// The management port's entry push reaches the switch through (the
    /// `MGMT_INTERFACE` key and its fields): once the running CONFIG_DB
    /// loses or changes it, the switch is dark.
    pub management: (String, Value),
}

impl SonicState {
    /// A switch named `hostname` with platform tables the plan never
    /// renders (port lanes, management address) and an old VLAN: an
    /// MSN2700's 32 ports of 100G, `Ethernet0` to `Ethernet124`, four
    /// lanes each, as its port table names them.
    pub fn new(hostname: &str) -> SonicState {
        let ports: serde_json::Map<String, Value> = (0..32u32)
            .map(|i| {
                let lanes: Vec<String> = (4 * i..4 * i + 4).map(|l| l.to_string()).collect();
                (
                    format!("Ethernet{}", 4 * i),
                    json!({"lanes": lanes.join(","), "alias": format!("etp{}", i + 1),
                           "speed": "100000", "mtu": "9100", "admin_status": "down"}),
                )
            })
            .collect();
        Self::with_ports(
            hostname,
            ("ACS-MSN2700", "x86_64-mlnx_msn2700-r0"),
            Value::Object(ports),
        )
    }

    /// A switch with Dynamic Port Breakout of `cages` 8-lane 400G cages
    /// (an SN4700-like platform): `BREAKOUT_CFG` has every root port
    /// (`Ethernet0`, `Ethernet8`, ...) with its mode, and `PORT` the ports
    /// that mode makes. The first `broken_out` cages run `2x200G` (two
    /// 4-lane children, the second named by its first lane, as
    /// sonic-buildimage's `portconfig.py` `BreakoutCfg.get_config` names
    /// them), the others `1x400G`. Mode names carry the platform's
    /// alternative speeds in brackets, as `platform.json`'s
    /// `breakout_modes` keys do (the mode names listed by sonic-mgmt's
    /// Dynamic Port Breakout tests for NVIDIA platforms).
    pub fn dpb(hostname: &str, cages: u32, broken_out: u32) -> SonicState {
        let mut ports = serde_json::Map::new();
        let mut modes = serde_json::Map::new();
        let lanes = |from: u32, n: u32| -> String {
            (from..from + n)
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        for c in 0..cages {
            let root = 8 * c;
            if c < broken_out {
                modes.insert(
                    format!("Ethernet{root}"),
                    json!({"brkout_mode": "2x200G[100G,50G,40G,25G,10G,1G]"}),
                );
                for (k, first) in [(0, root), (1, root + 4)] {
                    ports.insert(
                        format!("Ethernet{first}"),
                        json!({"lanes": lanes(first, 4), "alias": format!("etp{}{}", c + 1, ["a", "b"][k]),
                               "speed": "200000", "mtu": "9100", "admin_status": "down"}),
                    );
                }
            } else {
                modes.insert(
                    format!("Ethernet{root}"),
                    json!({"brkout_mode": "1x400G[200G,100G,50G,40G,25G,10G,1G]"}),
                );
                ports.insert(
                    format!("Ethernet{root}"),
                    json!({"lanes": lanes(root, 8), "alias": format!("etp{}", c + 1),
                           "speed": "400000", "mtu": "9100", "admin_status": "down"}),
                );
            }
        }
        let mut state = Self::with_ports(
            hostname,
            ("ACS-MSN4700", "x86_64-mlnx_msn4700-r0"),
            Value::Object(ports),
        );
        state.running["BREAKOUT_CFG"] = Value::Object(modes);
        state.saved = state.running.clone();
        state
    }

    fn with_ports(hostname: &str, (hwsku, platform): (&str, &str), ports: Value) -> SonicState {
        let running = json!({
            "DEVICE_METADATA": {"localhost": {"hostname": hostname, "hwsku": hwsku,
                                              "mac": "98:03:9b:00:00:01", "platform": platform}},
            "MGMT_INTERFACE": {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}},
            "PORT": ports,
            "VLAN": {"Vlan999": {"vlanid": "999"}}
        });
        SonicState {
            saved: running.clone(),
            running,
            checkpoints: BTreeMap::new(),
            files: BTreeMap::new(),
            dirs: BTreeSet::from(["/tmp".to_string()]),
            drop_on_replace: false,
            serial: "MT1822K07815".to_string(),
            lldp_table: String::new(),
            interfaces_status: String::new(),
            bgp_json: "{}".to_string(),
            bfd_json: "[]".to_string(),
            routes_json: None,
            management: (
                "eth0|192.0.2.10/24".to_string(),
                json!({"gwaddr": "192.0.2.1"}),
            ),
        }
    }

    /// True when the running CONFIG_DB no longer has the management
    /// address push reaches the switch through, or its gateway: SONiC
    /// applies `MGMT_INTERFACE` to eth0 (`config interface ip add eth0
    /// <ip/len> <gw>` writes `eth0|<ip/len>` with `gwaddr`, the default
    /// route of the management network; sonic-utilities config/main.py,
    /// hostcfgd), so a replace without it takes the address away. SONiC
    /// has no commit timer: the switch stays dark until someone at its
    /// console puts the address back.
    pub fn dark(&self) -> bool {
        let (key, fields) = &self.management;
        self.running.pointer(&format!(
            "/MGMT_INTERFACE/{}",
            key.replace('~', "~0").replace('/', "~1")
        )) != Some(fields)
    }

    /// The YANG checks this double knows: a port has its `lanes` and
    /// `speed` (both `mandatory true` in sonic-buildimage's
    /// `src/sonic-yang-models/yang-models/sonic-port.yang`, read at
    /// 0a0c2c2, for every switch that is not a chassis), a port MTU is
    /// 68..=9216, a VLAN member's VLAN exists. The exception's text as GCU raises it
    /// (generic_config_updater/patch_sorter.py: `Given patch will produce
    /// invalid config. Error: {error}`), which `config` prints after
    /// `Error: ` ([`gcu_failed`]).
    fn validate(config: &Value) -> Result<(), String> {
        let empty = serde_json::Map::new();
        let table = |name: &str| {
            config
                .get(name)
                .and_then(Value::as_object)
                .unwrap_or(&empty)
                .clone()
        };
        for (port, fields) in table("PORT") {
            for leaf in ["lanes", "speed"] {
                if fields.get(leaf).is_none() {
                    return Err(format!(
                        "Given patch will produce invalid config. Error: Data Loading Failed\n\
                         Missing required element \"{leaf}\" in \"PORT_LIST\". PORT {port}"
                    ));
                }
            }
            if let Some(mtu) = fields.get("mtu").and_then(Value::as_str) {
                let ok = mtu.parse::<u32>().is_ok_and(|m| (68..=9216).contains(&m));
                if !ok {
                    return Err(format!(
                        "Given patch will produce invalid config. Error: Data Loading Failed\n\
                         Invalid value \"{mtu}\" in \"mtu\" element. PORT {port}"
                    ));
                }
            }
        }
        let vlans = table("VLAN");
        for key in table("VLAN_MEMBER").keys() {
            let vlan = key.split('|').next().unwrap_or_default();
            if !vlans.contains_key(vlan) {
                return Err(format!(
                    "Given patch will produce invalid config. Error: Data Loading Failed\n\
                     Leafref \"/sonic-vlan:sonic-vlan/VLAN/VLAN_LIST/name\" of value \"{vlan}\" points to a non-existing leaf. VLAN_MEMBER {key}"
                ));
            }
        }
        Ok(())
    }

    /// The target file of `config replace`, read as config/main.py reads
    /// it inside its `try` (`open`, `json.loads`): a failure is the
    /// command's failure with Python's exception text.
    fn read_config(&self, path: &str) -> Result<Value, Reply> {
        let bytes = self.files.get(path).ok_or_else(|| {
            gcu_failed(
                "replace",
                &format!("[Errno 2] No such file or directory: '{path}'"),
            )
        })?;
        serde_json::from_slice(bytes).map_err(|e| gcu_failed("replace", &e.to_string()))
    }

    fn parent_exists(&self, path: &str) -> bool {
        path.rsplit_once('/')
            .is_some_and(|(dir, _)| self.dirs.contains(dir))
    }
}

/// FRR's `show ip route vrf all json` for the `STATIC_ROUTE` entries of a
/// CONFIG_DB (`vrf|prefix` keys, comma-separated `nexthop`).
fn static_routes(config: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for (key, fields) in config["STATIC_ROUTE"].as_object().into_iter().flatten() {
        let (vrf, prefix) = key.split_once('|').unwrap_or(("default", key));
        let hops: Vec<Value> = fields["nexthop"]
            .as_str()
            .unwrap_or_default()
            .split(',')
            .filter(|h| !h.is_empty())
            .map(|h| json!({"ip": h, "afi": "ipv4", "fib": true, "active": true}))
            .collect();
        let vrf_routes = out.entry(vrf.to_string()).or_insert_with(|| json!({}));
        vrf_routes[prefix] = json!([{"prefix": prefix, "protocol": "static", "vrfName": vrf,
            "selected": true, "installed": true, "nexthops": hops}]);
    }
    Value::Object(out)
}

fn arg<'a>(command: &'a str, prefix: &str) -> Option<&'a str> {
    command.strip_prefix(prefix).map(str::trim)
}

fn checkpoint_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

impl Script for SonicState {
    fn reads_stdin(&self, command: &str) -> bool {
        command.starts_with("cat > ")
    }

    fn exec(&mut self, command: &str, stdin: &[u8]) -> Reply {
        if self.dark() {
            return Reply::dropped();
        }
        if command == "sonic-cfggen -d -v DEVICE_METADATA.localhost.hostname" {
            let h = self.running["DEVICE_METADATA"]["localhost"]["hostname"]
                .as_str()
                .unwrap_or_default();
            return Reply::ok(format!("{h}\n"));
        }
        if command == "sonic-cfggen -d --print-data" {
            return Reply::ok(serde_json::to_string_pretty(&self.running).unwrap());
        }
        if command == "show platform summary" {
            return Reply::ok(format!(
                "Platform: x86_64-mlnx_msn2700-r0\nHwSKU: ACS-MSN2700\nASIC: mellanox\nASIC Count: 1\n\
                 Serial Number: {}\nModel Number: MSN2700-CS2FO\nHardware Revision: A1\n",
                self.serial
            ));
        }
        if let Some(dir) = arg(command, "mkdir ") {
            if self.dirs.contains(dir) || self.files.contains_key(dir) {
                return Reply::fail(
                    1,
                    format!("mkdir: cannot create directory '{dir}': File exists\n"),
                );
            }
            if !self.parent_exists(dir) {
                return Reply::fail(
                    1,
                    format!("mkdir: cannot create directory '{dir}': No such file or directory\n"),
                );
            }
            self.dirs.insert(dir.to_string());
            return Reply::ok("");
        }
        if let Some(path) = arg(command, "rm -rf ") {
            self.dirs
                .retain(|d| d != path && !d.starts_with(&format!("{path}/")));
            self.files
                .retain(|f, _| !f.starts_with(&format!("{path}/")) && f != path);
            return Reply::ok("");
        }
        if let Some(path) = arg(command, "cat > ") {
            if !self.parent_exists(path) {
                return Reply::fail(1, format!("bash: {path}: No such file or directory\n"));
            }
            self.files.insert(path.to_string(), stdin.to_vec());
            return Reply::ok("");
        }
        if let Some(path) = arg(command, "cat ") {
            return match self.files.get(path) {
                Some(b) => Reply::ok(String::from_utf8_lossy(b).into_owned()),
                None => Reply::fail(1, format!("cat: {path}: No such file or directory\n")),
            };
        }
        if let Some(path) = arg(command, "sudo config replace --dry-run ") {
            let config = match self.read_config(path) {
                Ok(c) => c,
                Err(r) => return r,
            };
            return match SonicState::validate(&config) {
                Ok(()) => Reply::ok(
                    "Config Replacer: Replacing config in dry-run mode.\nConfig replaced successfully.\n",
                ),
                Err(m) => gcu_failed("replace", &m),
            };
        }
        if let Some(path) = arg(command, "sudo config replace ") {
            let config = match self.read_config(path) {
                Ok(c) => c,
                Err(r) => return r,
            };
            if let Err(m) = SonicState::validate(&config) {
                return gcu_failed("replace", &m);
            }
            self.running = config;
            // Without its management address the switch drops the session
            // it was told this on.
            if self.drop_on_replace || self.dark() {
                return Reply::dropped();
            }
            return Reply::ok(
                "Config Replacer: Replacing config.\nConfig replaced successfully.\n",
            );
        }
        if let Some(name) = arg(command, "sudo config checkpoint ") {
            if !checkpoint_name(name) {
                return gcu_failed("checkpoint", &format!("bad checkpoint name '{name}'"));
            }
            self.checkpoints
                .insert(name.to_string(), self.running.clone());
            return Reply::ok("Checkpoint created successfully.\n");
        }
        if let Some(name) = arg(command, "sudo config rollback ") {
            return match self.checkpoints.get(name) {
                Some(c) => {
                    self.running = c.clone();
                    Reply::ok("Config rolled back successfully.\n")
                }
                None => gcu_failed("rollback", &format!("Checkpoint '{name}' does not exist")),
            };
        }
        if let Some(name) = arg(command, "sudo config delete-checkpoint ") {
            return match self.checkpoints.remove(name) {
                Some(_) => Reply::ok("Checkpoint deleted successfully.\n"),
                None => gcu_failed(
                    "delete-checkpoint",
                    &format!("Checkpoint '{name}' does not exist"),
                ),
            };
        }
        if command == "sudo config save -y" {
            self.saved = self.running.clone();
            return Reply::ok(
                "Running command: /usr/local/bin/sonic-cfggen -d --print-data > /etc/sonic/config_db.json\n",
            );
        }
        match command {
            "show lldp table" => Reply::ok(self.lldp_table.clone()),
            "show interfaces status" => Reply::ok(self.interfaces_status.clone()),
            "sudo vtysh -c 'show bgp vrf all summary json'" => Reply::ok(self.bgp_json.clone()),
            "sudo vtysh -c 'show bfd peers json'" => Reply::ok(self.bfd_json.clone()),
            "sudo vtysh -c 'show ip route vrf all json'" => Reply::ok(
                self.routes_json
                    .clone()
                    .unwrap_or_else(|| static_routes(&self.running).to_string()),
            ),
            _ => {
                let word = command.split_whitespace().next().unwrap_or_default();
                Reply::fail(127, format!("bash: {word}: command not found\n"))
            }
        }
    }

    fn shell_open(&mut self) -> String {
        "admin@sonic:~$ ".to_string()
    }

    fn shell_line(&mut self, line: &str) -> Reply {
        let mut r = self.exec(line, &[]);
        r.stdout.push_str("admin@sonic:~$ ");
        r
    }
}

/// How sonic-utilities' `config` fails a Generic Config Updater command
/// (config/main.py, `replace`, `rollback`, `checkpoint`,
/// `delete-checkpoint`): `Failed to ...` on stderr, then `ctx.fail(ex)`,
/// click's usage error (usage line, `Try "config <command> -h" for help.`,
/// a blank line, `Error: <exception>`) with exit status 2. The layout is
/// that of a recorded `config replace` failure on a SONiC switch; the
/// exceptions' texts are generic_updater.py's (`Checkpoint '<name>' does
/// not exist`).
pub fn gcu_failed(command: &str, error: &str) -> Reply {
    let (failed, argument) = match command {
        "replace" => ("Failed to replace config", "TARGET_FILE_PATH"),
        "rollback" => ("Failed to rollback config", "CHECKPOINT_NAME"),
        "checkpoint" => ("Failed to create a config checkpoint", "CHECKPOINT_NAME"),
        _ => ("Failed to delete config checkpoint", "CHECKPOINT_NAME"),
    };
    Reply::fail(
        2,
        format!(
            "{failed}\nUsage: config {command} [OPTIONS] {argument}\n\
             Try \"config {command} -h\" for help.\n\nError: {error}\n"
        ),
    )
}
