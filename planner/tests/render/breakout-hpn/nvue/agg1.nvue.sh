#!/bin/sh
# agg1 (8x200G switch) of plan hpn-breakout-16 (HPN 2 planes x 1 segment x 4 rails 1:1): agg1 (spine, VLAN 100)
# NVUE commands rendered by planner for Cumulus Linux 5 (5.15 and later
# spell `nv set service lldp` as `nv set system lldp`). Run this on the
# switch, review with `nv config diff`, then apply with `nv config apply`.
set -e
nv set system hostname agg1
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
nv set interface swp1 description 'to tor1 swp1s0'
nv set interface swp1 link mtu 9216
nv set interface swp1 ip vrf Vrf100
nv set interface swp1 ip address 10.255.0.1/31
nv set interface swp1 qos pfc-watchdog
nv set interface swp2 description 'to tor1 swp1s1'
nv set interface swp2 link mtu 9216
nv set interface swp2 ip vrf Vrf100
nv set interface swp2 ip address 10.255.0.3/31
nv set interface swp2 qos pfc-watchdog
nv set interface swp3 description 'to tor2 swp1s0'
nv set interface swp3 link mtu 9216
nv set interface swp3 ip vrf Vrf100
nv set interface swp3 ip address 10.255.0.9/31
nv set interface swp3 qos pfc-watchdog
nv set interface swp4 description 'to tor2 swp1s1'
nv set interface swp4 link mtu 9216
nv set interface swp4 ip vrf Vrf100
nv set interface swp4 ip address 10.255.0.11/31
nv set interface swp4 qos pfc-watchdog
nv set interface swp5 description 'to tor3 swp1s0'
nv set interface swp5 link mtu 9216
nv set interface swp5 ip vrf Vrf100
nv set interface swp5 ip address 10.255.0.17/31
nv set interface swp5 qos pfc-watchdog
nv set interface swp6 description 'to tor3 swp1s1'
nv set interface swp6 link mtu 9216
nv set interface swp6 ip vrf Vrf100
nv set interface swp6 ip address 10.255.0.19/31
nv set interface swp6 qos pfc-watchdog
nv set interface swp7 description 'to tor4 swp1s0'
nv set interface swp7 link mtu 9216
nv set interface swp7 ip vrf Vrf100
nv set interface swp7 ip address 10.255.0.25/31
nv set interface swp7 qos pfc-watchdog
nv set interface swp8 description 'to tor4 swp1s1'
nv set interface swp8 link mtu 9216
nv set interface swp8 ip vrf Vrf100
nv set interface swp8 ip address 10.255.0.27/31
nv set interface swp8 qos pfc-watchdog
nv set vrf Vrf100 router static 10.0.0.0/24 via 10.255.0.0
nv set vrf Vrf100 router static 10.0.0.0/24 via 10.255.0.2
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.8
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.10
nv set vrf Vrf100 router static 10.0.2.0/24 via 10.255.0.16
nv set vrf Vrf100 router static 10.0.2.0/24 via 10.255.0.18
nv set vrf Vrf100 router static 10.0.3.0/24 via 10.255.0.24
nv set vrf Vrf100 router static 10.0.3.0/24 via 10.255.0.26
