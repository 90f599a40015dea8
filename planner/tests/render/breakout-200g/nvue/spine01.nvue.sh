#!/bin/sh
# spine01 (sw-16x400) of plan breakout-200g (2-tier leaf-spine 1:1): spine01 (spine, VLAN 100)
# NVUE commands rendered by planner for Cumulus Linux 5 (5.15 and later
# spell `nv set service lldp` as `nv set system lldp`). Run this on the
# switch, review with `nv config diff`, then apply with `nv config apply`.
set -e
nv set system hostname spine01
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
nv set interface swp1 description 'to leaf01 swp1s0'
nv set interface swp1 link mtu 9216
nv set interface swp1 ip vrf Vrf100
nv set interface swp1 ip address 10.255.0.1/31
nv set interface swp1 qos pfc-watchdog
nv set interface swp2 description 'to leaf01 swp1s1'
nv set interface swp2 link mtu 9216
nv set interface swp2 ip vrf Vrf100
nv set interface swp2 ip address 10.255.0.3/31
nv set interface swp2 qos pfc-watchdog
nv set interface swp3 description 'to leaf01 swp2s0'
nv set interface swp3 link mtu 9216
nv set interface swp3 ip vrf Vrf100
nv set interface swp3 ip address 10.255.0.5/31
nv set interface swp3 qos pfc-watchdog
nv set interface swp4 description 'to leaf01 swp2s1'
nv set interface swp4 link mtu 9216
nv set interface swp4 ip vrf Vrf100
nv set interface swp4 ip address 10.255.0.7/31
nv set interface swp4 qos pfc-watchdog
nv set interface swp5 description 'to leaf01 swp3s0'
nv set interface swp5 link mtu 9216
nv set interface swp5 ip vrf Vrf100
nv set interface swp5 ip address 10.255.0.9/31
nv set interface swp5 qos pfc-watchdog
nv set interface swp6 description 'to leaf01 swp3s1'
nv set interface swp6 link mtu 9216
nv set interface swp6 ip vrf Vrf100
nv set interface swp6 ip address 10.255.0.11/31
nv set interface swp6 qos pfc-watchdog
nv set interface swp7 description 'to leaf01 swp4s0'
nv set interface swp7 link mtu 9216
nv set interface swp7 ip vrf Vrf100
nv set interface swp7 ip address 10.255.0.13/31
nv set interface swp7 qos pfc-watchdog
nv set interface swp8 description 'to leaf01 swp4s1'
nv set interface swp8 link mtu 9216
nv set interface swp8 ip vrf Vrf100
nv set interface swp8 ip address 10.255.0.15/31
nv set interface swp8 qos pfc-watchdog
nv set interface swp9 description 'to leaf02 swp1s0'
nv set interface swp9 link mtu 9216
nv set interface swp9 ip vrf Vrf100
nv set interface swp9 ip address 10.255.0.33/31
nv set interface swp9 qos pfc-watchdog
nv set interface swp10 description 'to leaf02 swp1s1'
nv set interface swp10 link mtu 9216
nv set interface swp10 ip vrf Vrf100
nv set interface swp10 ip address 10.255.0.35/31
nv set interface swp10 qos pfc-watchdog
nv set interface swp11 description 'to leaf02 swp2s0'
nv set interface swp11 link mtu 9216
nv set interface swp11 ip vrf Vrf100
nv set interface swp11 ip address 10.255.0.37/31
nv set interface swp11 qos pfc-watchdog
nv set interface swp12 description 'to leaf02 swp2s1'
nv set interface swp12 link mtu 9216
nv set interface swp12 ip vrf Vrf100
nv set interface swp12 ip address 10.255.0.39/31
nv set interface swp12 qos pfc-watchdog
nv set interface swp13 description 'to leaf02 swp3s0'
nv set interface swp13 link mtu 9216
nv set interface swp13 ip vrf Vrf100
nv set interface swp13 ip address 10.255.0.41/31
nv set interface swp13 qos pfc-watchdog
nv set interface swp14 description 'to leaf02 swp3s1'
nv set interface swp14 link mtu 9216
nv set interface swp14 ip vrf Vrf100
nv set interface swp14 ip address 10.255.0.43/31
nv set interface swp14 qos pfc-watchdog
nv set interface swp15 description 'to leaf02 swp4s0'
nv set interface swp15 link mtu 9216
nv set interface swp15 ip vrf Vrf100
nv set interface swp15 ip address 10.255.0.45/31
nv set interface swp15 qos pfc-watchdog
nv set interface swp16 description 'to leaf02 swp4s1'
nv set interface swp16 link mtu 9216
nv set interface swp16 ip vrf Vrf100
nv set interface swp16 ip address 10.255.0.47/31
nv set interface swp16 qos pfc-watchdog
nv set vrf Vrf100 router static 10.0.0.0/24 via 10.255.0.0
nv set vrf Vrf100 router static 10.0.0.0/24 via 10.255.0.2
nv set vrf Vrf100 router static 10.0.0.0/24 via 10.255.0.4
nv set vrf Vrf100 router static 10.0.0.0/24 via 10.255.0.6
nv set vrf Vrf100 router static 10.0.0.0/24 via 10.255.0.8
nv set vrf Vrf100 router static 10.0.0.0/24 via 10.255.0.10
nv set vrf Vrf100 router static 10.0.0.0/24 via 10.255.0.12
nv set vrf Vrf100 router static 10.0.0.0/24 via 10.255.0.14
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.32
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.34
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.36
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.38
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.40
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.42
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.44
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.46
