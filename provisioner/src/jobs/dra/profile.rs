//! DRA profiles: which DeviceClass, driver and attribute name a GPU and a
//! NIC of a plan sub-node on a cluster's DRA drivers, with the shipped
//! profiles (`nvidia-dranet`, `nvidia-sriov`) and a job file's overrides
//! (the module docs of [`super`] say how they are used).

use serde::{Deserialize, Serialize};

use planner::plan::PlanSubNode;

use super::PCIE_ROOT;
/// Which field of a plan sub-node a selector compares with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanField {
    /// The GPU's position among the server's GPUs (an integer).
    GpuIndex,
    /// The GPU's inventory name.
    Gpu,
    /// The NIC's RDMA device name (`mlx5_0`).
    Nic,
    /// The NIC's network interface name.
    Netdev,
}

impl PlanField {
    const ALL: [(&'static str, PlanField); 4] = [
        ("gpu_index", PlanField::GpuIndex),
        ("gpu", PlanField::Gpu),
        ("nic", PlanField::Nic),
        ("netdev", PlanField::Netdev),
    ];

    fn parse(s: &str) -> Option<PlanField> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, f)| *f)
    }

    pub(crate) fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("", |(n, _)| n)
    }

    /// The sub-node's value, or `None` when the plan lacks it.
    pub fn value(self, sn: &PlanSubNode) -> Option<Attr> {
        match self {
            PlanField::GpuIndex => sn
                .gpu_index
                .and_then(|i| i64::try_from(i).ok())
                .map(Attr::Int),
            PlanField::Gpu => sn.gpu.as_deref().map(|g| Attr::Str(g.to_string())),
            PlanField::Nic => Some(Attr::Str(sn.nic.to_string())),
            PlanField::Netdev => sn.netdev.as_deref().map(|n| Attr::Str(n.to_string())),
        }
    }
}

/// How to find one kind of device (GPU or NIC).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceMatch {
    /// The DeviceClass a claim requests.
    pub device_class: String,
    /// The driver that publishes the devices (`spec.driver` of their
    /// ResourceSlices).
    pub driver: String,
    /// The attribute a selector compares: `name` in the driver's domain,
    /// or `domain/name`.
    pub attribute: String,
    /// The plan field it is compared with.
    pub value: PlanField,
}

impl DeviceMatch {
    /// `(domain, name)` of the attribute.
    fn domain_name(&self) -> (&str, &str) {
        self.attribute
            .rsplit_once('/')
            .unwrap_or((self.driver.as_str(), self.attribute.as_str()))
    }

    /// The attribute, qualified with its domain.
    pub(crate) fn qualified(&self) -> String {
        let (d, n) = self.domain_name();
        format!("{d}/{n}")
    }

    /// The CEL expression that selects the device whose attribute is
    /// `value`.
    pub fn cel(&self, value: &Attr) -> String {
        let (domain, name) = self.domain_name();
        format!(
            "device.attributes[{}].{name} == {}",
            cel_string(domain),
            value.cel()
        )
    }

    /// Applies a job file's overrides; each problem is `(key, what, fix)`.
    pub(crate) fn override_with(
        &mut self,
        raw: RawDevice,
        kind: &str,
    ) -> Vec<(&'static str, String, &'static str)> {
        let mut problems = Vec::new();
        for (key, value, slot) in [
            ("device_class", raw.device_class, &mut self.device_class),
            ("driver", raw.driver, &mut self.driver),
        ] {
            if let Some(v) = value {
                if let Some(why) = planner::export::k8s_names::dns_subdomain_problem(&v) {
                    problems.push((
                        key,
                        format!("`{v}` {why}"),
                        "write the name as `kubectl get deviceclasses` or the ResourceSlices show it",
                    ));
                }
                *slot = v;
            }
        }
        if let Some(a) = raw.attribute {
            let (domain, name) = a.rsplit_once('/').unwrap_or(("", a.as_str()));
            let bad_domain = !domain.is_empty()
                && planner::export::k8s_names::dns_subdomain_problem(domain).is_some();
            if bad_domain || !is_c_identifier(name) {
                problems.push((
                    "attribute",
                    format!("`{a}` is not a device attribute name"),
                    "use a name such as index, or domain/name such as resource.kubernetes.io/pciBusID",
                ));
            }
            self.attribute = a;
        }
        if let Some(v) = raw.value {
            match PlanField::parse(&v) {
                Some(f) => {
                    let fits = match kind {
                        "gpu" => matches!(f, PlanField::GpuIndex | PlanField::Gpu),
                        _ => matches!(f, PlanField::Nic | PlanField::Netdev),
                    };
                    if fits {
                        self.value = f;
                    } else {
                        problems.push((
                            "value",
                            format!("`{v}` is not a field of the {kind}"),
                            if kind == "gpu" {
                                "use gpu_index or gpu"
                            } else {
                                "use nic or netdev"
                            },
                        ));
                    }
                }
                None => problems.push((
                    "value",
                    format!("`{v}` is not a field of a plan sub-node"),
                    if kind == "gpu" {
                        "use gpu_index or gpu"
                    } else {
                        "use nic or netdev"
                    },
                )),
            }
        }
        problems
    }
}

/// `[placement.gpu]` or `[placement.nic]` of a job file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDevice {
    #[serde(default)]
    device_class: Option<String>,
    #[serde(default)]
    driver: Option<String>,
    #[serde(default)]
    attribute: Option<String>,
    #[serde(default)]
    value: Option<String>,
}

/// Device classes and attributes of a cluster's DRA drivers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Profile {
    /// Profile name (`nvidia-dranet`, `nvidia-sriov`).
    pub name: String,
    /// The GPU.
    pub gpu: DeviceMatch,
    /// The NIC.
    pub nic: DeviceMatch,
    /// The attribute GPU and NIC share when they sit under one PCIe root.
    pub pair_attribute: String,
}

impl Profile {
    /// NVIDIA's GPU DRA driver and dranet.
    pub(crate) fn nvidia_dranet() -> Profile {
        Profile {
            name: "nvidia-dranet".to_string(),
            gpu: nvidia_gpu(),
            nic: DeviceMatch {
                device_class: "dranet".to_string(),
                driver: "dra.net".to_string(),
                attribute: "rdmaDevName".to_string(),
                value: PlanField::Nic,
            },
            pair_attribute: PCIE_ROOT.to_string(),
        }
    }

    /// NVIDIA's GPU DRA driver and the SR-IOV DRA driver.
    pub(crate) fn nvidia_sriov() -> Profile {
        let driver = "sriovnetwork.k8snetworkplumbingwg.io".to_string();
        Profile {
            name: "nvidia-sriov".to_string(),
            gpu: nvidia_gpu(),
            nic: DeviceMatch {
                device_class: driver.clone(),
                driver,
                attribute: "PFName".to_string(),
                value: PlanField::Netdev,
            },
            pair_attribute: PCIE_ROOT.to_string(),
        }
    }

    /// The shipped profile called `name`.
    pub fn named(name: &str) -> Option<Profile> {
        match name {
            "nvidia-dranet" => Some(Self::nvidia_dranet()),
            "nvidia-sriov" => Some(Self::nvidia_sriov()),
            _ => None,
        }
    }

    /// Names of the shipped profiles.
    pub fn names() -> [&'static str; 2] {
        ["nvidia-dranet", "nvidia-sriov"]
    }
}

fn nvidia_gpu() -> DeviceMatch {
    DeviceMatch {
        device_class: "gpu.nvidia.com".to_string(),
        driver: "gpu.nvidia.com".to_string(),
        attribute: "index".to_string(),
        value: PlanField::GpuIndex,
    }
}

/// Why `a` cannot be a qualified attribute name (`domain/name`), or `None`.
pub(crate) fn qualified_attribute_problem(a: &str) -> Option<String> {
    let Some((domain, name)) = a.rsplit_once('/') else {
        return Some("has no domain (write domain/name)".to_string());
    };
    if let Some(why) = planner::export::k8s_names::dns_subdomain_problem(domain) {
        return Some(format!("has a bad domain: {why}"));
    }
    if !is_c_identifier(name) {
        return Some("has a name that is not a C identifier of at most 32 characters".to_string());
    }
    None
}

fn is_c_identifier(s: &str) -> bool {
    s.len() <= 32
        && s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A CEL string literal.
fn cel_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A device attribute's value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Attr {
    /// `int`.
    Int(i64),
    /// `bool`.
    Bool(bool),
    /// `string`.
    Str(String),
    /// `version` (semantic version).
    Version(String),
}

impl Attr {
    fn cel(&self) -> String {
        match self {
            Attr::Int(i) => i.to_string(),
            Attr::Bool(b) => b.to_string(),
            Attr::Str(s) => cel_string(s),
            Attr::Version(v) => format!("semver({})", cel_string(v)),
        }
    }
}

impl std::fmt::Display for Attr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Attr::Int(i) => write!(f, "{i}"),
            Attr::Bool(b) => write!(f, "{b}"),
            Attr::Str(s) | Attr::Version(s) => f.write_str(s),
        }
    }
}
