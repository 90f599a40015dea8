//! The `[pod]` table: settings of every rank pod, with tolerations and
//! volume sources checked against `k8s-openapi`'s types.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use planner::export::k8s_names::{
    dns_label_problem, dns_subdomain_problem, qualified_name_problem,
};

use super::{Bad, Quantity};

/// A volume of every rank pod.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PodVolume {
    /// Volume name (a DNS label).
    pub name: String,
    /// Where the ranks' container mounts it.
    pub mount_path: String,
    /// Mount it read-only.
    pub read_only: bool,
    /// The Kubernetes volume source (`persistentVolumeClaim = {...}`,
    /// `hostPath = {...}`, ...), as the API writes it.
    pub source: serde_json::Map<String, serde_json::Value>,
}

/// The `[pod]` table, checked: settings of every rank pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PodSettings {
    /// Linux capabilities added to the ranks' container besides `IPC_LOCK`.
    pub capabilities: Vec<String>,
    /// Size limit of the memory-backed `/dev/shm`.
    pub shm_size: Option<Quantity>,
    /// Pod annotations.
    pub annotations: BTreeMap<String, String>,
    /// Pod tolerations, as the API writes them.
    pub tolerations: Vec<serde_json::Value>,
    /// `spec.priorityClassName`.
    pub priority_class_name: Option<String>,
    /// `spec.schedulerName`.
    pub scheduler_name: Option<String>,
    /// Extra volumes.
    pub volumes: Vec<PodVolume>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPod {
    #[serde(default)]
    capabilities: Vec<String>,
    #[serde(default)]
    shm_size: Option<String>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
    #[serde(default)]
    tolerations: Vec<toml::Table>,
    #[serde(default)]
    priority_class_name: Option<String>,
    #[serde(default)]
    scheduler_name: Option<String>,
    #[serde(default)]
    volumes: Vec<RawVolume>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVolume {
    name: String,
    mount_path: String,
    #[serde(default)]
    read_only: bool,
    source: toml::Table,
}

pub(super) fn check_pod(raw: RawPod, bad: &mut Bad<'_>) -> PodSettings {
    let mut capabilities = Vec::new();
    for c in raw.capabilities {
        let name = c.strip_prefix("CAP_").unwrap_or(&c).to_string();
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_');
        if !valid {
            bad(
                Some("pod"),
                "capabilities",
                format!("`{c}` is not a Linux capability name"),
                "write it as capabilities(7) does, without CAP_, e.g. SYS_NICE",
            );
        } else if name != "IPC_LOCK" && !capabilities.contains(&name) {
            capabilities.push(name);
        }
    }
    let shm_size = raw.shm_size.and_then(|q| {
        let parsed = Quantity::parse(&q);
        if parsed.is_none() {
            bad(
                Some("pod"),
                "shm_size",
                format!("`{q}` is not a whole quantity"),
                "write digits and an optional suffix, e.g. 16Gi",
            );
        }
        parsed
    });
    for key in raw.annotations.keys() {
        if let Some(why) = qualified_name_problem(key) {
            bad(
                Some("pod.annotations"),
                key,
                format!("`{key}` {why}"),
                "use a qualified name such as example.com/team",
            );
        }
    }
    let mut tolerations = Vec::new();
    for (i, t) in raw.tolerations.into_iter().enumerate() {
        match k8s_object::<k8s_openapi::api::core::v1::Toleration>(t) {
            Ok(v) => tolerations.push(v),
            Err(e) => bad(
                Some("pod"),
                "tolerations",
                format!("toleration {}: {e}", i + 1),
                "write it as the Kubernetes API does: key, operator (Exists or Equal), value, effect, tolerationSeconds",
            ),
        }
    }
    for (key, value) in [
        ("priority_class_name", raw.priority_class_name.as_deref()),
        ("scheduler_name", raw.scheduler_name.as_deref()),
    ] {
        if let Some(v) = value
            && let Some(why) = dns_subdomain_problem(v)
        {
            bad(
                Some("pod"),
                key,
                format!("`{v}` {why}"),
                "write the name as `kubectl get priorityclasses` or the scheduler's configuration shows it",
            );
        }
    }
    let mut volumes: Vec<PodVolume> = Vec::new();
    for v in raw.volumes {
        let reserved = ["eflops-ranks", "eflops-run", "dshm"];
        if let Some(why) = dns_label_problem(&v.name) {
            bad(
                Some("pod"),
                "volumes",
                format!("volume `{}` {why}", v.name),
                "name it like a Kubernetes object",
            );
            continue;
        }
        if reserved.contains(&v.name.as_str()) || volumes.iter().any(|o| o.name == v.name) {
            bad(
                Some("pod"),
                "volumes",
                format!("volume name `{}` is taken", v.name),
                &format!(
                    "use another name (the provisioner uses {})",
                    reserved.join(", ")
                ),
            );
            continue;
        }
        if !v.mount_path.starts_with('/')
            || [MOUNT_TAKEN, "/dev/shm"]
                .iter()
                .any(|m| v.mount_path.starts_with(m))
        {
            bad(
                Some("pod"),
                "volumes",
                format!(
                    "volume `{}`: mount path `{}` is not an absolute path of its own",
                    v.name, v.mount_path
                ),
                "use an absolute path outside /etc/eflops and /dev/shm",
            );
            continue;
        }
        let mut source = serde_json::Map::new();
        for (k, val) in v.source {
            source.insert(k, toml_to_json(val));
        }
        let mut whole = source.clone();
        whole.insert("name".into(), serde_json::Value::String(v.name.clone()));
        let known = source.len() == 1
            && serde_json::from_value::<k8s_openapi::api::core::v1::Volume>(
                serde_json::Value::Object(whole.clone()),
            )
            .ok()
            .and_then(|vol| serde_json::to_value(vol).ok())
            .is_some_and(|back| back.as_object().map(|o| o.len()) == Some(2));
        if !known {
            bad(
                Some("pod"),
                "volumes",
                format!(
                    "volume `{}`: the source is not one Kubernetes volume source",
                    v.name
                ),
                "give exactly one source as the API writes it, e.g. source = { persistentVolumeClaim = { claimName = \"data\" } }",
            );
            continue;
        }
        volumes.push(PodVolume {
            name: v.name,
            mount_path: v.mount_path,
            read_only: v.read_only,
            source,
        });
    }
    PodSettings {
        capabilities,
        shm_size,
        annotations: raw.annotations,
        tolerations,
        priority_class_name: raw.priority_class_name,
        scheduler_name: raw.scheduler_name,
        volumes,
    }
}

/// Where the job's ConfigMap is mounted (a volume may not mount there).
const MOUNT_TAKEN: &str = "/etc/eflops";

fn toml_to_json(v: toml::Value) -> serde_json::Value {
    match v {
        toml::Value::String(s) => s.into(),
        toml::Value::Integer(i) => i.into(),
        toml::Value::Float(f) => {
            serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, Into::into)
        }
        toml::Value::Boolean(b) => b.into(),
        toml::Value::Datetime(d) => d.to_string().into(),
        toml::Value::Array(a) => a.into_iter().map(toml_to_json).collect(),
        toml::Value::Table(t) => t
            .into_iter()
            .map(|(k, v)| (k, toml_to_json(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

/// A TOML table as the Kubernetes object `T`, back as JSON: fields `T`
/// does not know are an error (the API would drop them).
fn k8s_object<T>(t: toml::Table) -> std::result::Result<serde_json::Value, String>
where
    T: serde::de::DeserializeOwned + Serialize,
{
    let given = toml_to_json(toml::Value::Table(t));
    let typed: T = serde_json::from_value(given.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(typed).map_err(|e| e.to_string())?;
    if let (Some(g), Some(b)) = (given.as_object(), back.as_object()) {
        let unknown: Vec<&String> = g.keys().filter(|k| !b.contains_key(*k)).collect();
        if !unknown.is_empty() {
            return Err(format!(
                "unknown field{} {}",
                if unknown.len() == 1 { "" } else { "s" },
                unknown
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(back)
}
