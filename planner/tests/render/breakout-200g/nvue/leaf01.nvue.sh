#!/bin/sh
# leaf01 (sw-16x400) of plan breakout-200g (2-tier leaf-spine 1:1): leaf01 (leaf, VLAN 100)
# NVUE commands rendered by planner for Cumulus Linux 5 (5.15 and later
# spell `nv set service lldp` as `nv set system lldp`). Run this on the
# switch, review with `nv config diff`, then apply with `nv config apply`.
set -e
nv set system hostname leaf01
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
nv set interface swp5 link breakout 2x
nv set interface swp6 link breakout 2x
nv set interface swp7 link breakout 2x
nv set interface swp8 link breakout 2x
nv set interface swp9 link breakout 2x
nv set interface swp10 link breakout 2x
nv set interface swp11 link breakout 2x
nv set interface swp12 link breakout 2x
nv set interface swp13 link breakout 2x
nv set interface swp14 link breakout 2x
nv set interface swp15 link breakout 2x
nv set interface swp16 link breakout 2x
nv set interface swp1s0 description 'to spine01 swp1'
nv set interface swp1s0 link mtu 9216
nv set interface swp1s0 ip vrf Vrf100
nv set interface swp1s0 ip address 10.255.0.0/31
nv set interface swp1s0 qos pfc-watchdog
nv set interface swp1s1 description 'to spine01 swp2'
nv set interface swp1s1 link mtu 9216
nv set interface swp1s1 ip vrf Vrf100
nv set interface swp1s1 ip address 10.255.0.2/31
nv set interface swp1s1 qos pfc-watchdog
nv set interface swp2s0 description 'to spine01 swp3'
nv set interface swp2s0 link mtu 9216
nv set interface swp2s0 ip vrf Vrf100
nv set interface swp2s0 ip address 10.255.0.4/31
nv set interface swp2s0 qos pfc-watchdog
nv set interface swp2s1 description 'to spine01 swp4'
nv set interface swp2s1 link mtu 9216
nv set interface swp2s1 ip vrf Vrf100
nv set interface swp2s1 ip address 10.255.0.6/31
nv set interface swp2s1 qos pfc-watchdog
nv set interface swp3s0 description 'to spine01 swp5'
nv set interface swp3s0 link mtu 9216
nv set interface swp3s0 ip vrf Vrf100
nv set interface swp3s0 ip address 10.255.0.8/31
nv set interface swp3s0 qos pfc-watchdog
nv set interface swp3s1 description 'to spine01 swp6'
nv set interface swp3s1 link mtu 9216
nv set interface swp3s1 ip vrf Vrf100
nv set interface swp3s1 ip address 10.255.0.10/31
nv set interface swp3s1 qos pfc-watchdog
nv set interface swp4s0 description 'to spine01 swp7'
nv set interface swp4s0 link mtu 9216
nv set interface swp4s0 ip vrf Vrf100
nv set interface swp4s0 ip address 10.255.0.12/31
nv set interface swp4s0 qos pfc-watchdog
nv set interface swp4s1 description 'to spine01 swp8'
nv set interface swp4s1 link mtu 9216
nv set interface swp4s1 ip vrf Vrf100
nv set interface swp4s1 ip address 10.255.0.14/31
nv set interface swp4s1 qos pfc-watchdog
nv set interface swp5s0 description 'to spine02 swp1'
nv set interface swp5s0 link mtu 9216
nv set interface swp5s0 ip vrf Vrf100
nv set interface swp5s0 ip address 10.255.0.16/31
nv set interface swp5s0 qos pfc-watchdog
nv set interface swp5s1 description 'to spine02 swp2'
nv set interface swp5s1 link mtu 9216
nv set interface swp5s1 ip vrf Vrf100
nv set interface swp5s1 ip address 10.255.0.18/31
nv set interface swp5s1 qos pfc-watchdog
nv set interface swp6s0 description 'to spine02 swp3'
nv set interface swp6s0 link mtu 9216
nv set interface swp6s0 ip vrf Vrf100
nv set interface swp6s0 ip address 10.255.0.20/31
nv set interface swp6s0 qos pfc-watchdog
nv set interface swp6s1 description 'to spine02 swp4'
nv set interface swp6s1 link mtu 9216
nv set interface swp6s1 ip vrf Vrf100
nv set interface swp6s1 ip address 10.255.0.22/31
nv set interface swp6s1 qos pfc-watchdog
nv set interface swp7s0 description 'to spine02 swp5'
nv set interface swp7s0 link mtu 9216
nv set interface swp7s0 ip vrf Vrf100
nv set interface swp7s0 ip address 10.255.0.24/31
nv set interface swp7s0 qos pfc-watchdog
nv set interface swp7s1 description 'to spine02 swp6'
nv set interface swp7s1 link mtu 9216
nv set interface swp7s1 ip vrf Vrf100
nv set interface swp7s1 ip address 10.255.0.26/31
nv set interface swp7s1 qos pfc-watchdog
nv set interface swp8s0 description 'to spine02 swp7'
nv set interface swp8s0 link mtu 9216
nv set interface swp8s0 ip vrf Vrf100
nv set interface swp8s0 ip address 10.255.0.28/31
nv set interface swp8s0 qos pfc-watchdog
nv set interface swp8s1 description 'to spine02 swp8'
nv set interface swp8s1 link mtu 9216
nv set interface swp8s1 ip vrf Vrf100
nv set interface swp8s1 ip address 10.255.0.30/31
nv set interface swp8s1 qos pfc-watchdog
nv set interface swp9s0 description 'node01 mlx5_0'
nv set interface swp9s0 link mtu 9216
nv set interface swp9s0 bridge domain br_default access 100
nv set interface swp9s0 qos pfc-watchdog
nv set interface swp9s1 description 'node01 mlx5_1'
nv set interface swp9s1 link mtu 9216
nv set interface swp9s1 bridge domain br_default access 100
nv set interface swp9s1 qos pfc-watchdog
nv set interface swp10s0 description 'node01 mlx5_2'
nv set interface swp10s0 link mtu 9216
nv set interface swp10s0 bridge domain br_default access 100
nv set interface swp10s0 qos pfc-watchdog
nv set interface swp10s1 description 'node01 mlx5_3'
nv set interface swp10s1 link mtu 9216
nv set interface swp10s1 bridge domain br_default access 100
nv set interface swp10s1 qos pfc-watchdog
nv set interface swp11s0 description 'node02 mlx5_0'
nv set interface swp11s0 link mtu 9216
nv set interface swp11s0 bridge domain br_default access 100
nv set interface swp11s0 qos pfc-watchdog
nv set interface swp11s1 description 'node02 mlx5_1'
nv set interface swp11s1 link mtu 9216
nv set interface swp11s1 bridge domain br_default access 100
nv set interface swp11s1 qos pfc-watchdog
nv set interface swp12s0 description 'node02 mlx5_2'
nv set interface swp12s0 link mtu 9216
nv set interface swp12s0 bridge domain br_default access 100
nv set interface swp12s0 qos pfc-watchdog
nv set interface swp12s1 description 'node02 mlx5_3'
nv set interface swp12s1 link mtu 9216
nv set interface swp12s1 bridge domain br_default access 100
nv set interface swp12s1 qos pfc-watchdog
nv set interface swp13s0 description 'node03 mlx5_0'
nv set interface swp13s0 link mtu 9216
nv set interface swp13s0 bridge domain br_default access 100
nv set interface swp13s0 qos pfc-watchdog
nv set interface swp13s1 description 'node03 mlx5_1'
nv set interface swp13s1 link mtu 9216
nv set interface swp13s1 bridge domain br_default access 100
nv set interface swp13s1 qos pfc-watchdog
nv set interface swp14s0 description 'node03 mlx5_2'
nv set interface swp14s0 link mtu 9216
nv set interface swp14s0 bridge domain br_default access 100
nv set interface swp14s0 qos pfc-watchdog
nv set interface swp14s1 description 'node03 mlx5_3'
nv set interface swp14s1 link mtu 9216
nv set interface swp14s1 bridge domain br_default access 100
nv set interface swp14s1 qos pfc-watchdog
nv set interface swp15s0 description 'node04 mlx5_0'
nv set interface swp15s0 link mtu 9216
nv set interface swp15s0 bridge domain br_default access 100
nv set interface swp15s0 qos pfc-watchdog
nv set interface swp15s1 description 'node04 mlx5_1'
nv set interface swp15s1 link mtu 9216
nv set interface swp15s1 bridge domain br_default access 100
nv set interface swp15s1 qos pfc-watchdog
nv set interface swp16s0 description 'node04 mlx5_2'
nv set interface swp16s0 link mtu 9216
nv set interface swp16s0 bridge domain br_default access 100
nv set interface swp16s0 qos pfc-watchdog
nv set interface swp16s1 description 'node04 mlx5_3'
nv set interface swp16s1 link mtu 9216
nv set interface swp16s1 bridge domain br_default access 100
nv set interface swp16s1 qos pfc-watchdog
nv set interface vlan100 ip vrf Vrf100
nv set interface vlan100 ip address 10.0.0.254/24
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.1
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.3
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.5
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.7
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.9
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.11
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.13
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.15
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.17
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.19
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.21
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.23
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.25
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.27
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.29
nv set vrf Vrf100 router static 10.0.1.0/24 via 10.255.0.31
