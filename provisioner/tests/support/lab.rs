//! A lab under test: `provisioner lab ARGS --name NAME --state-dir DIR`
//! with its own name and state directory, taken down when the test ends
//! (also when it fails).

use std::process::{Command, Output};

use serde_json::Value;

/// One lab test at a time, across the lab modules (`lab`, `lab_bgp`,
/// `lab_mpi`): their runs measure rates and time TCP on the machine's few
/// cores, which another lab's traffic would skew, and libtest runs many
/// tests at once (`RUST_TEST_THREADS`, .cargo/config.toml). A test that
/// panicked while holding it leaves nothing the next one needs.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct Lab {
    pub name: String,
    pub dir: tempfile::TempDir,
}

impl Lab {
    pub fn new(name: &str) -> Lab {
        Lab {
            name: name.to_string(),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn cmd(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_provisioner"))
            .arg("lab")
            .args(args)
            .args(["--name", &self.name, "--state-dir"])
            .arg(self.dir.path())
            .output()
            .unwrap()
    }

    /// The output of a command that must succeed.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.cmd(args);
        assert!(
            out.status.success(),
            "lab {args:?}: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The JSON of a command that must succeed.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["--format", "json"]);
        serde_json::from_str(&self.ok(&all)).unwrap()
    }

    /// The lab's state file (what it built).
    #[allow(dead_code, reason = "not every lab test reads the state")]
    pub fn state(&self) -> Value {
        let text =
            std::fs::read_to_string(self.dir.path().join(format!("{}.json", self.name))).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// The lab's network namespaces.
    #[allow(dead_code, reason = "the BGP tests look for FRR's directories too")]
    pub fn namespaces(&self) -> Vec<String> {
        self.leftovers_in(&["/run/netns"])
    }

    /// Everything of this lab on the machine: namespaces and FRR
    /// instance directories.
    pub fn leftovers(&self) -> Vec<String> {
        self.leftovers_in(&["/run/netns", "/etc/frr", "/var/run/frr"])
    }

    fn leftovers_in(&self, dirs: &[&str]) -> Vec<String> {
        let prefix = format!("efl-{}-", self.name);
        let mut found = Vec::new();
        for dir in dirs {
            if let Ok(d) = std::fs::read_dir(dir) {
                found.extend(
                    d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                        .filter(|n| n.starts_with(&prefix))
                        .map(|n| format!("{dir}/{n}")),
                );
            }
        }
        found
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // A failed test still removes its lab.
        if !self.leftovers().is_empty() {
            let _ = self.cmd(&["down"]);
        }
    }
}
