use super::*;

pub(crate) const MINIMAL: &str = r#"
[[server]]
name = "node{n:02}"
count = 2
sockets = ["cpu0"]

[[server.pcie_switch]]
name = "plx0"
socket = "cpu0"

[[server.gpu]]
pcie_switch = "plx0"
model = "V100"

[[server.nic]]
name = "mlx5_0"
pcie_switch = "plx0"
model = "CX-5"
speed_gbps = 100

[[switch]]
name = "sw{n}"
count = 2
model = "S9850"
ports = 32
port_gbps = 100
"#;

#[test]
fn minimal_inventory_expands() {
    let inv = Inventory::from_toml(MINIMAL, "min.toml").unwrap();
    assert_eq!(inv.name, "min");
    let names: Vec<&str> = inv.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["node01", "node02"]);
    let sw: Vec<&str> = inv.switches.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(sw, ["sw1", "sw2"]);
    assert_eq!(inv.sub_node_count(), 2);
    let t = &inv.server_templates[0];
    assert_eq!(
        t.sub_nodes(),
        vec![SubNodeSpec {
            nic: 0,
            gpu: Some(0)
        }]
    );
    assert_eq!(t.gpus[0].name, "gpu0");
}
