//! Tests of the SONiC client's pure parts: the target, the diff, the
//! readers of its answers.

use super::*;

#[test]
fn a_target_that_changes_management_is_named() {
    let running = serde_json::json!({
        "MGMT_INTERFACE": {"eth0|10.0.0.5/24": {"gwaddr": "10.0.0.1"}},
        "STATIC_ROUTE": {"mgmt|0.0.0.0/0": {"nexthop": "10.0.0.1"}, "Vrf1|10.1.0.0/24": {"nexthop": "10.2.0.1"}},
        "VLAN": {"Vlan1": {"vlanid": "1"}}
    });
    let running = running.as_object().expect("object");
    // The plan's tables replaced: management untouched.
    let plan = serde_json::json!({"STATIC_ROUTE": {}, "VLAN": {}});
    let target = replace_target(running, plan.as_object().expect("object"));
    assert_eq!(management_cut(running, &target), Vec::<String>::new());
    // A candidate that carries MGMT_INTERFACE with another address.
    let bad = serde_json::json!({"MGMT_INTERFACE": {"eth0|10.0.0.9/24": {"gwaddr": "10.0.0.1"}}});
    let target = replace_target(running, bad.as_object().expect("object"));
    assert_eq!(
        management_cut(running, &target),
        ["MGMT_INTERFACE|eth0|10.0.0.5/24 {\"gwaddr\":\"10.0.0.1\"}"]
    );
}
use serde_json::json;

/// Breakouts are the switch's: compared before the load, never in the
/// target. A mode with bracketed alternatives is the same mode.
#[test]
fn breakouts_are_compared_and_never_written() {
    let running = obj(json!({
        "BREAKOUT_CFG": {"Ethernet0": {"brkout_mode": "2x200G[100G]"},
                         "Ethernet8": {"brkout_mode": "1x400G"},
                         "Ethernet16": {"brkout_mode": "1x400G"}},
        "PORT": {"Ethernet0": {"lanes": "0,1,2,3", "speed": "200000"},
                 "Ethernet4": {"lanes": "4,5,6,7", "speed": "200000"},
                 "Ethernet8": {"lanes": "8,9,10,11,12,13,14,15", "speed": "400000"},
                 "Ethernet16": {"lanes": "16,17,18,19,20,21,22,23", "speed": "400000"}}
    }));
    let fits = obj(json!({
        "BREAKOUT_CFG": {"Ethernet0": {"brkout_mode": "2x200G"}},
        "PORT": {"Ethernet0": {"mtu": "9216"}, "Ethernet4": {"mtu": "9216"}}
    }));
    assert_eq!(port_mismatch(&running, &fits), Vec::<String>::new());
    // The switch's table stays whole and as it runs: the plan's
    // spelling of the mode does not replace the platform's, and the
    // roots the plan does not break out keep their entries.
    let t = replace_target(&running, &fits);
    assert_eq!(t["BREAKOUT_CFG"], running["BREAKOUT_CFG"]);
    let needs = obj(json!({
        "BREAKOUT_CFG": {"Ethernet0": {"brkout_mode": "2x200G"},
                         "Ethernet8": {"brkout_mode": "2x200G"},
                         "Ethernet24": {"brkout_mode": "2x200G"}},
        "PORT": {"Ethernet8": {"mtu": "9216"}, "Ethernet12": {"mtu": "9216"}}
    }));
    assert_eq!(
        port_mismatch(&running, &needs),
        [
            "BREAKOUT_CFG|Ethernet24: not a root port of the switch (its BREAKOUT_CFG has no such entry), the plan breaks it out 2x200G",
            "BREAKOUT_CFG|Ethernet8: the switch runs 1x400G, the plan needs 2x200G: run `sudo config interface breakout Ethernet8 <mode> -y` with the mode `show interfaces breakout` lists for 2x200G",
            "PORT|Ethernet12: the switch has no such port (`show interfaces status`)",
        ]
    );
    // A platform without Dynamic Port Breakout has no BREAKOUT_CFG:
    // its ports are what it has.
    let mut fixed = running.clone();
    fixed.remove("BREAKOUT_CFG");
    assert_eq!(
        port_mismatch(&fixed, &needs),
        ["PORT|Ethernet12: the switch has no such port (`show interfaces status`)"]
    );
    assert!(!replace_target(&fixed, &needs).contains_key("BREAKOUT_CFG"));
    assert_eq!(mode_speeds("4x100G[50G,25G]"), "4x100G");
    assert_eq!(mode_speeds("2x50G(4)"), "2x50G(4)");
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn target_keeps_hardware_and_replaces_plan_tables() {
    let running = obj(json!({
        "PORT": {"Ethernet0": {"lanes": "0,1", "alias": "etp1", "mtu": "9100"},
                 "Ethernet8": {"lanes": "8,9", "alias": "etp2"}},
        "MGMT_INTERFACE": {"eth0|10.0.0.5/24": {"gwaddr": "10.0.0.1"}},
        "VLAN": {"Vlan99": {"vlanid": "99"}}
    }));
    let candidate = obj(json!({
        "PORT": {"Ethernet0": {"mtu": "9216", "admin_status": "up"}},
        "VLAN": {"Vlan100": {"vlanid": "100"}}
    }));
    let t = replace_target(&running, &candidate);
    assert_eq!(
        Value::Object(t.clone()),
        json!({
            "PORT": {"Ethernet0": {"lanes": "0,1", "alias": "etp1", "mtu": "9216", "admin_status": "up"},
                     "Ethernet8": {"lanes": "8,9", "alias": "etp2"}},
            "MGMT_INTERFACE": {"eth0|10.0.0.5/24": {"gwaddr": "10.0.0.1"}},
            "VLAN": {"Vlan100": {"vlanid": "100"}}
        })
    );
    assert_eq!(
        json_diff(&running, &t),
        "+ /PORT/Ethernet0/admin_status: \"up\"\n\
         - /PORT/Ethernet0/mtu: \"9100\"\n\
         + /PORT/Ethernet0/mtu: \"9216\"\n\
         + /VLAN/Vlan100/vlanid: \"100\"\n\
         - /VLAN/Vlan99/vlanid: \"99\"\n"
    );
    assert_eq!(json_diff(&t, &t), "");
    // The management VRF's static routes stay; the plan's VRFs' routes
    // are the candidate's.
    let running = obj(json!({"STATIC_ROUTE": {
        "mgmt|0.0.0.0/0": {"nexthop": "10.0.0.1"},
        "management|10.9.0.0/16": {"nexthop": "10.0.0.1"},
        "Vrf1|10.8.0.0/16": {"nexthop": "10.255.0.1"}}}));
    let candidate = obj(json!({"STATIC_ROUTE": {"Vrf1|10.1.0.0/16": {"nexthop": "10.255.0.1"}}}));
    assert_eq!(
        Value::Object(replace_target(&running, &candidate)),
        json!({"STATIC_ROUTE": {
            "mgmt|0.0.0.0/0": {"nexthop": "10.0.0.1"},
            "management|10.9.0.0/16": {"nexthop": "10.0.0.1"},
            "Vrf1|10.1.0.0/16": {"nexthop": "10.255.0.1"}}})
    );
    // Keys with `/` are escaped as JSON pointers.
    let a = obj(json!({"STATIC_ROUTE": {}}));
    let b = obj(json!({"STATIC_ROUTE": {"Vrf1|10.1.0.0/16": {"nexthop": "10.0.0.1"}}}));
    assert_eq!(
        json_diff(&a, &b),
        "+ /STATIC_ROUTE/Vrf1|10.1.0.0~116/nexthop: \"10.0.0.1\"\n"
    );
}

#[test]
fn lldp_rows() {
    let text = "Capability codes: (R) Router, (B) Bridge, (O) Other\n\
LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr\n\
-----------  --------------  --------------  ------------  -----------------\n\
Ethernet0    up01            Ethernet4       BR            Ethernet4\n\
Ethernet8    up02            Ethernet4       R             uplink to low01\n\
--------------------------------------------------\n\
Total entries displayed:  2\n";
    let n = lldp_table(text).unwrap();
    assert_eq!(n.len(), 2);
    assert_eq!(
        n[1],
        LldpNeighbour {
            port: "Ethernet8".into(),
            system: "up02".into(),
            port_id: "Ethernet4".into()
        }
    );
    assert!(lldp_table("Error: lldp not running").is_err());
}

#[test]
fn interface_rows() {
    let text = "  Interface            Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin             Type    Asym PFC\n\
-----------  ---------------  -------  -----  -----  -------  ------  ------  -------  ---------------  ----------\n\
  Ethernet0  0,1,2,3,4,5,6,7     400G   9100     rs     etp1  routed      up       up  QSFP-DD Double Density 8X Pluggable Transceiver         N/A\n\
  Ethernet8  8,9,10,11           100G   9100    N/A     etp2  routed    down       up  N/A         N/A\n";
    let i = interfaces_status(text).unwrap();
    assert_eq!(
        i,
        vec![
            Interface {
                name: "Ethernet0".into(),
                up: true,
                speed_mbps: Some(400_000)
            },
            Interface {
                name: "Ethernet8".into(),
                up: false,
                speed_mbps: Some(100_000)
            },
        ]
    );
    assert!(interfaces_status("nothing").is_err());
    assert_eq!(speed_mbps("N/A"), None);
    assert_eq!(speed_mbps(""), None);
    assert_eq!(speed_mbps("400G"), Some(400_000));
    assert_eq!(speed_mbps("100M"), Some(100));
    // A multi-byte last character (the wire campaign's seed
    // 13600053254180593094 of fuzz_push_cli_answers) is no unit.
    assert_eq!(speed_mbps("100G\u{feff}"), None);
    assert_eq!(speed_mbps("é"), None);
}

#[test]
fn gcu_failures_are_read_without_clicks_usage_lines() {
    // The layout of a recorded `config replace` failure (config/main.py
    // `replace`: `Failed to replace config`, then click's usage error).
    let stderr = "Failed to replace config\nUsage: config replace [OPTIONS] TARGET_FILE_PATH\n\
                  Try \"config replace -h\" for help.\n\n\
                  Error: Given patch will produce invalid config. Error: Data Loading Failed\n\
                  Value \"public\" does not satisfy the constraint \"Vlan(409[0-5])\"\n";
    assert_eq!(
        gcu_reason(stderr).unwrap(),
        "Failed to replace config: Given patch will produce invalid config. Error: Data \
         Loading Failed\nValue \"public\" does not satisfy the constraint \"Vlan(409[0-5])\""
    );
    let stderr = "Failed to rollback config\nUsage: config rollback [OPTIONS] CHECKPOINT_NAME\n\
                  Try \"config rollback -h\" for help.\n\nError: Checkpoint 'efl-push-1' does not exist\n";
    assert_eq!(
        gcu_reason(stderr).unwrap(),
        "Failed to rollback config: Checkpoint 'efl-push-1' does not exist"
    );
    // Not click's shape: the whole message stays.
    assert_eq!(gcu_reason("sudo: a password is required\n"), None);
    assert_eq!(
        gcu_reason("Error: bare\n").as_deref(),
        Some("bare"),
        "an error line with nothing before it"
    );
}

#[test]
fn serial_from_platform_summary() {
    let text = "Platform: x86_64-mlnx_msn2700-r0\nHwSKU: ACS-MSN2700\nASIC: mellanox\n\
ASIC Count: 1\nSerial Number: MT1822K07815\nModel Number: MSN2700-CS2FO\n";
    assert_eq!(platform_serial(text).as_deref(), Some("MT1822K07815"));
    assert_eq!(platform_serial("Platform: x\n"), None);
}
