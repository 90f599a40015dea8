//! As-built cabling readers: CSV (`switch,port,peer,peer_port[,speed]`) and
//! LLDP neighbour JSON as `lldpctl -f json` (or `-f json0`) prints it.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::error::{Error, Problem, Result};

/// Where an observed cable was read: `file:line` (CSV) or
/// `file (device port)` (LLDP).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The input's name.
    pub file: Arc<str>,
    /// 1-based line, for CSV.
    pub line: Option<usize>,
    /// Device and port, for LLDP.
    pub detail: Option<String>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.line, &self.detail) {
            (Some(l), _) => write!(f, "{}:{l}", self.file),
            (None, Some(d)) => write!(f, "{} ({d})", self.file),
            (None, None) => write!(f, "{}", self.file),
        }
    }
}

/// One observed cable: a port of a device and the device and port at the
/// other end, as the input names them.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// Local device (switch or server).
    pub device: String,
    /// Local port: number, interface name, NIC name or MAC.
    pub port: String,
    /// Remote device.
    pub peer: String,
    /// Remote port.
    pub peer_port: String,
    /// Speed in Gbps, when the input gives it.
    pub gbps: Option<f64>,
    /// Where it came from.
    pub origin: Origin,
}

/// Parses a CSV cabling file. A header row is optional; with one, columns
/// are found by name (`switch`, `port`, `peer`, `peer_port`, optional
/// `speed`/`gbps`) and other columns are ignored, so `planner cables`
/// output reads back as is. Lines starting with `#` are comments. Fields
/// follow RFC 4180 (`crate::text::read_csv`): quoted with `"`, a doubled
/// `""` inside is one quote.
pub fn parse_csv(text: &str, file: &str) -> Result<Vec<Observed>> {
    let shared: Arc<str> = Arc::from(file);
    let mut rows = Vec::with_capacity(text.len() / 40);
    let mut columns: Option<[Option<usize>; 5]> = None;
    let mut first = true;
    for rec in crate::text::read_csv(text, file)? {
        let line = rec.line;
        let record = rec.fields;
        if first {
            first = false;
            if record[0].eq_ignore_ascii_case("switch") {
                let find = |names: &[&str]| {
                    record
                        .iter()
                        .position(|h| names.iter().any(|n| h.eq_ignore_ascii_case(n)))
                };
                let cols = [
                    find(&["switch"]),
                    find(&["port"]),
                    find(&["peer"]),
                    find(&["peer_port", "peer-port"]),
                    find(&["speed", "gbps", "speed_gbps"]),
                ];
                for (i, name) in ["switch", "port", "peer", "peer_port"].iter().enumerate() {
                    if cols[i].is_none() {
                        return Err(Error::Invalid {
                            file: file.to_string(),
                            what: "cabling",
                            problems: vec![Problem::at(
                                Some(line),
                                "header",
                                format!("no `{name}` column"),
                                "use the header switch,port,peer,peer_port[,speed]",
                            )],
                        });
                    }
                }
                columns = Some(cols);
                continue;
            }
        }
        if columns.is_none() && !(4..=5).contains(&record.len()) {
            return Err(Error::Syntax {
                file: file.to_string(),
                line,
                column: 1,
                message: format!(
                    "{} fields; a cabling row is switch,port,peer,peer_port[,speed]",
                    record.len()
                ),
            });
        }
        let cols = columns.unwrap_or([Some(0), Some(1), Some(2), Some(3), Some(4)]);
        let get = |i: usize| {
            cols[i]
                .and_then(|c| record.get(c))
                .map_or("", |s| s.as_str())
        };
        let (device, port, peer, peer_port) = (get(0), get(1), get(2), get(3));
        if device.is_empty() || port.is_empty() || peer.is_empty() || peer_port.is_empty() {
            return Err(Error::Syntax {
                file: file.to_string(),
                line,
                column: 1,
                message: "a field is empty; every row needs switch, port, peer and peer_port"
                    .to_string(),
            });
        }
        let speed = get(4);
        let gbps = if speed.is_empty() {
            None
        } else {
            Some(parse_speed(speed).ok_or_else(|| Error::Syntax {
                file: file.to_string(),
                line,
                column: 1,
                message: format!("speed `{speed}` is not a number of Gbps (e.g. 100 or 100G)"),
            })?)
        };
        rows.push(Observed {
            device: device.to_string(),
            port: port.to_string(),
            peer: peer.to_string(),
            peer_port: peer_port.to_string(),
            gbps,
            origin: Origin {
                file: shared.clone(),
                line: Some(line),
                detail: None,
            },
        });
    }
    Ok(rows)
}

/// Parses a speed such as `100`, `100G`, `100Gbps`, `25000M` into Gbps.
pub fn parse_speed(s: &str) -> Option<f64> {
    let s = s.trim();
    let digits = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let value: f64 = s[..digits].parse().ok()?;
    let unit = s[digits..].trim().to_ascii_lowercase();
    let gbps = match unit.as_str() {
        "" | "g" | "gb" | "gbps" | "gbit" | "gbit/s" | "gb/s" => value,
        "m" | "mb" | "mbps" | "mbit" | "mbit/s" | "mb/s" => value / 1000.0,
        _ => return None,
    };
    (gbps.is_finite() && gbps > 0.0).then_some(gbps)
}

/// Parses LLDP neighbour JSON. The document is either one device's
/// `lldpctl -f json` (or `json0`) output, whose device name is
/// `default_device` (the file stem), or an object mapping device names to
/// such outputs.
pub fn parse_lldp(text: &str, file: &str, default_device: &str) -> Result<Vec<Observed>> {
    let doc: Value = serde_json::from_str(text).map_err(|e| Error::json(file, &e))?;
    let mut out = Vec::new();
    let invalid = |msg: String| Error::Invalid {
        file: file.to_string(),
        what: "cabling",
        problems: vec![Problem::at(
            None,
            "LLDP document",
            msg,
            "give the output of `lldpctl -f json` (one device, named by the file) or an object {\"<device>\": <lldpctl output>, ...}",
        )],
    };
    let obj = doc
        .as_object()
        .ok_or_else(|| invalid("the top level is not an object".to_string()))?;
    if obj.contains_key("lldp") {
        device_doc(&doc, file, default_device, &mut out).map_err(invalid)?;
    } else {
        for (device, sub) in obj {
            device_doc(sub, file, device, &mut out)
                .map_err(|m| invalid(format!("device {device}: {m}")))?;
        }
    }
    Ok(out)
}

fn device_doc(
    doc: &Value,
    file: &str,
    device: &str,
    out: &mut Vec<Observed>,
) -> std::result::Result<(), String> {
    let lldp = doc.get("lldp").ok_or("no `lldp` key")?;
    // json0: {"lldp": [{"interface": [ {name, chassis: [..], port: [..]} ]}]}
    let lldp = match lldp {
        Value::Array(a) => a.first().cloned().unwrap_or(Value::Null),
        v => v.clone(),
    };
    let Some(interfaces) = lldp.get("interface") else {
        // No neighbours at all.
        return Ok(());
    };
    let mut entries: Vec<(String, &Value)> = Vec::new();
    match interfaces {
        Value::Object(map) => {
            for (name, v) in map {
                entries.push((name.clone(), v));
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(map) if map.contains_key("name") => {
                        let name =
                            first_string(map.get("name")).ok_or("interface without a name")?;
                        entries.push((name, item));
                    }
                    Value::Object(map) => {
                        for (name, v) in map {
                            entries.push((name.clone(), v));
                        }
                    }
                    _ => return Err("an interface entry is not an object".to_string()),
                }
            }
        }
        _ => return Err("`interface` is neither an object nor a list".to_string()),
    }
    for (local_port, v) in entries {
        let peer = chassis_name(v.get("chassis"))
            .ok_or_else(|| format!("interface {local_port}: no chassis name"))?;
        let port =
            unwrap_list(v.get("port")).ok_or_else(|| format!("interface {local_port}: no port"))?;
        let id = unwrap_list(port.get("id"));
        let id_type = id
            .and_then(|i| first_string(i.get("type")))
            .unwrap_or_default();
        let id_value = id.and_then(|i| first_string(i.get("value")));
        let descr = first_string(port.get("descr"));
        let peer_port = match (id_type.as_str(), id_value, descr) {
            ("ifname" | "local" | "ifalias", Some(v), _) => v,
            ("mac", Some(mac), None) => mac,
            ("mac", Some(mac), Some(d)) => format!("{d}|{mac}"),
            (_, _, Some(d)) => d,
            (_, Some(v), None) => v,
            _ => return Err(format!("interface {local_port}: no port id")),
        };
        let gbps = unwrap_list(port.get("auto-negotiation"))
            .and_then(|a| first_string(a.get("current")))
            .and_then(|c| mau_speed(&c));
        out.push(Observed {
            device: device.to_string(),
            port: local_port.clone(),
            peer,
            peer_port,
            gbps,
            origin: Origin {
                file: Arc::from(file),
                line: None,
                detail: Some(format!("{device} {local_port}")),
            },
        });
    }
    Ok(())
}

/// `{"x": ..}` or `[{"x": ..}]` (json0 wraps every value in a list).
fn unwrap_list(v: Option<&Value>) -> Option<&Value> {
    match v? {
        Value::Array(a) => a.first(),
        other => Some(other),
    }
}

/// A string, `{"value": s}` or `[{"value": s}]`.
fn first_string(v: Option<&Value>) -> Option<String> {
    match unwrap_list(v)? {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("value").and_then(|x| x.as_str()).map(str::to_string),
        _ => None,
    }
}

/// The chassis' system name: json form `{"<name>": {...}}`, json0 form
/// `[{"name": [{"value": name}]}]`, or `{"name": ...}`.
fn chassis_name(v: Option<&Value>) -> Option<String> {
    let c = unwrap_list(v)?;
    let obj = c.as_object()?;
    if let Some(name) = first_string(obj.get("name")) {
        return Some(name);
    }
    // json form: a single key that is the name, unless the chassis has no
    // name and its fields sit directly in it.
    if obj.len() == 1 {
        let (k, inner) = obj.iter().next()?;
        if inner.is_object() && k != "id" {
            return Some(k.clone());
        }
    }
    let id = unwrap_list(obj.get("id"))?;
    first_string(id.get("value"))
}

/// Speed from an LLDP MAU type: `100GbaseCR4`, `10GigBaseCX4 - ...`,
/// `1000BaseTFD`.
fn mau_speed(s: &str) -> Option<f64> {
    let digits = s.find(|c: char| !c.is_ascii_digit())?;
    let n: f64 = s[..digits].parse().ok()?;
    let rest = s[digits..].to_ascii_lowercase();
    if rest.starts_with('g') {
        Some(n)
    } else if rest.starts_with("base") || rest.starts_with('m') {
        Some(n / 1000.0)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_and_without_header() {
        let rows = parse_csv(
            "sw01,1,sw02,17\n# comment\nsw01,5,node01,mlx5_0,100G\n",
            "c.csv",
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].gbps, Some(100.0));
        assert_eq!(rows[1].origin.to_string(), "c.csv:3");
        let rows = parse_csv(
            "switch,port,peer,peer_port,speed,kind\nsw01,1,sw02,17,100,inter_switch\n",
            "c.csv",
        )
        .unwrap();
        assert_eq!(rows[0].peer_port, "17");
        assert_eq!(rows[0].origin.to_string(), "c.csv:2");
    }

    #[test]
    fn csv_errors_name_the_line() {
        let e = parse_csv("sw01,1,sw02\n", "c.csv").unwrap_err().to_string();
        assert!(e.starts_with("c.csv:1:1:"), "{e}");
        let e = parse_csv("sw01,1,sw02,3,fast\n", "c.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("speed `fast`"), "{e}");
        let e = parse_csv("switch,port,peer\n", "c.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("peer_port"), "{e}");
    }

    #[test]
    fn quoted_fields() {
        let rows = parse_csv("\"sw 1\",\"Eth1/1\",sw2,3\n", "q.csv").unwrap();
        assert_eq!(rows[0].device, "sw 1");
        let rows = parse_csv("a,\"b,c\",\"d\"\"e\",4\n", "q.csv").unwrap();
        assert_eq!(
            (rows[0].port.as_str(), rows[0].peer.as_str()),
            ("b,c", "d\"e")
        );
        let e = parse_csv("a,\"b,c,d\n", "q.csv").unwrap_err().to_string();
        assert!(e.starts_with("q.csv:1:"), "{e}");
    }

    #[test]
    fn speeds() {
        assert_eq!(parse_speed("100"), Some(100.0));
        assert_eq!(parse_speed("25000M"), Some(25.0));
        assert_eq!(parse_speed("100 Gbps"), Some(100.0));
        assert_eq!(parse_speed("x"), None);
        assert_eq!(parse_speed("0"), None);
        assert_eq!(mau_speed("100GbaseCR4 - copper"), Some(100.0));
        assert_eq!(mau_speed("10GigBaseCX4 - X copper"), Some(10.0));
        assert_eq!(mau_speed("1000BaseTFD"), Some(1.0));
    }

    #[test]
    fn lldp_json_single_and_many_interfaces() {
        let one = r#"{"lldp": {"interface": {"HundredGigE1/0/1": {"via": "LLDP",
            "chassis": {"sw02": {"id": {"type": "mac", "value": "00:00:00:00:00:02"}}},
            "port": {"id": {"type": "ifname", "value": "HundredGigE1/0/17"}, "descr": "x",
                     "auto-negotiation": {"current": "100GbaseCR4 - copper"}}}}}}"#;
        let rows = parse_lldp(one, "sw01.json", "sw01").unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].device, "sw01");
        assert_eq!(rows[0].peer, "sw02");
        assert_eq!(rows[0].peer_port, "HundredGigE1/0/17");
        assert_eq!(rows[0].gbps, Some(100.0));

        let many = r#"{"sw01": {"lldp": {"interface": [
            {"5": {"chassis": {"node01": {}}, "port": {"id": {"type": "mac", "value": "aa:bb:cc:dd:ee:ff"}, "descr": "mlx5_0"}}},
            {"6": {"chassis": {"node01": {}}, "port": {"id": {"type": "ifname", "value": "mlx5_1"}}}}]}}}"#;
        let rows = parse_lldp(many, "all.json", "all").unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].peer_port, "mlx5_0|aa:bb:cc:dd:ee:ff");
        assert_eq!(rows[1].peer_port, "mlx5_1");
    }

    #[test]
    fn lldp_json0() {
        let doc = r#"{"lldp": [{"interface": [{"name": "eth0", "via": "LLDP",
            "chassis": [{"id": [{"type": "mac", "value": "00:00:00:00:00:02"}], "name": [{"value": "sw03"}]}],
            "port": [{"id": [{"type": "ifname", "value": "swp7"}], "descr": [{"value": "swp7"}]}]}]}]}"#;
        let rows = parse_lldp(doc, "node01.json", "node01").unwrap();
        assert_eq!(rows[0].device, "node01");
        assert_eq!(rows[0].port, "eth0");
        assert_eq!(rows[0].peer, "sw03");
        assert_eq!(rows[0].peer_port, "swp7");
    }

    #[test]
    fn lldp_errors() {
        let e = parse_lldp("{", "x.json", "x").unwrap_err().to_string();
        assert!(e.starts_with("x.json:1:"), "{e}");
        let e = parse_lldp("[1]", "x.json", "x").unwrap_err().to_string();
        assert!(e.contains("not an object"), "{e}");
        let e = parse_lldp(r#"{"sw1": {"nope": 1}}"#, "x.json", "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("device sw1"), "{e}");
    }
}
