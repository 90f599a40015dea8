#!/bin/sh
# tor1 (4x400G switch in 2x200G breakout) of plan hpn-breakout-16 (HPN 2 planes x 1 segment x 4 rails 1:1): tor1 (leaf, VLAN 100)
# NVUE commands rendered by planner for Cumulus Linux 5 (5.15 and later
# spell `nv set service lldp` as `nv set system lldp`). Run this on the
# switch, review with `nv config diff`, then apply with `nv config apply`.
set -e
nv set system hostname tor1
nv set service lldp
nv set vrf Vrf100 table auto
nv set bridge domain br_default vlan 100
nv set qos mapping default-global trust l3
nv set qos mapping default-global dscp 0-25,27-47,49-63 switch-priority 0
nv set qos mapping default-global dscp 26 switch-priority 3
nv set qos mapping default-global dscp 48 switch-priority 6
nv set qos traffic-pool default-lossy memory-percent 50
nv set qos traffic-pool default-lossy switch-priority 0-2,4-7
nv set qos traffic-pool default-lossless memory-percent 50
nv set qos traffic-pool default-lossless switch-priority 3
nv set qos pfc default-global switch-priority 3
nv set qos pfc default-global tx enable
nv set qos pfc default-global rx enable
nv set qos congestion-control default-global traffic-class 3 ecn enable
nv set qos congestion-control default-global traffic-class 3 min-threshold 153600
nv set qos congestion-control default-global traffic-class 3 max-threshold 1536000
nv set qos congestion-control default-global traffic-class 3 probability 100
nv set qos pfc-watchdog polling-interval 100
nv set qos pfc-watchdog robustness 2
nv set qos egress-scheduler default-global traffic-class 6 mode strict
nv set interface swp1 link breakout 2x
nv set interface swp2 link breakout 2x
nv set interface swp3 link breakout 2x
nv set interface swp4 link breakout 2x
nv set interface swp1s0 description 'to agg1 swp1'
nv set interface swp1s0 link mtu 9216
nv set interface swp1s0 ip vrf Vrf100
nv set interface swp1s0 ip address 10.255.0.0/31
nv set interface swp1s0 qos pfc-watchdog
nv set interface swp1s1 description 'to agg1 swp2'
nv set interface swp1s1 link mtu 9216
nv set interface swp1s1 ip vrf Vrf100
nv set interface swp1s1 ip address 10.255.0.2/31
nv set interface swp1s1 qos pfc-watchdog
nv set interface swp2s0 description 'to agg2 swp1'
nv set interface swp2s0 link mtu 9216
nv set interface swp2s0 ip vrf Vrf100
nv set interface swp2s0 ip address 10.255.0.4/31
nv set interface swp2s0 qos pfc-watchdog
nv set interface swp2s1 description 'to agg2 swp2'
nv set interface swp2s1 link mtu 9216
nv set interface swp2s1 ip vrf Vrf100
nv set interface swp2s1 ip address 10.255.0.6/31
nv set interface swp2s1 qos pfc-watchdog
nv set interface swp3s0 description 'h1 nic0:p0 (gpu0)'
nv set interface swp3s0 link mtu 9216
nv set interface swp3s0 bridge domain br_default access 100
nv set interface swp3s0 qos pfc-watchdog
nv set interface swp3s1 description 'h2 nic0:p0 (gpu0)'
nv set interface swp3s1 link mtu 9216
nv set interface swp3s1 bridge domain br_default access 100
nv set interface swp3s1 qos pfc-watchdog
nv set interface swp4s0 description 'h3 nic0:p0 (gpu0)'
nv set interface swp4s0 link mtu 9216
nv set interface swp4s0 bridge domain br_default access 100
nv set interface swp4s0 qos pfc-watchdog
nv set interface swp4s1 description 'h4 nic0:p0 (gpu0)'
nv set interface swp4s1 link mtu 9216
nv set interface swp4s1 bridge domain br_default access 100
nv set interface swp4s1 qos pfc-watchdog
nv set interface vlan100 ip vrf Vrf100
nv set interface vlan100 ip address 10.0.0.254/24
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.1
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.3
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.5
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.7
nv set vrf Vrf100 router static 10.0.2.0/24 via 10.255.0.1
nv set vrf Vrf100 router static 10.0.2.0/24 via 10.255.0.3
nv set vrf Vrf100 router static 10.0.2.0/24 via 10.255.0.5
nv set vrf Vrf100 router static 10.0.2.0/24 via 10.255.0.7
nv set vrf Vrf100 router static 10.0.3.0/24 via 10.255.0.1
nv set vrf Vrf100 router static 10.0.3.0/24 via 10.255.0.3
nv set vrf Vrf100 router static 10.0.3.0/24 via 10.255.0.5
nv set vrf Vrf100 router static 10.0.3.0/24 via 10.255.0.7
