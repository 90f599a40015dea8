#!/bin/sh
# sw04 (H3C S9850-4C) of plan eflops-4x16 (BiGraph 4x16): sw04-u (upper, VLAN 101), sw04-l (lower, VLAN 102)
# NVUE commands rendered by planner for Cumulus Linux 5 (5.15 and later
# spell `nv set service lldp` as `nv set system lldp`). Run this on the
# switch, review with `nv config diff`, then apply with `nv config apply`.
set -e
nv set system hostname sw04
nv set service lldp
nv set vrf Vrf101 table auto
nv set vrf Vrf102 table auto
nv set bridge domain br_default vlan 101,102
nv set qos mapping default-global trust l3
nv set qos mapping default-global dscp 0-25,27-33,35-47,49-63 switch-priority 0
nv set qos mapping default-global dscp 26 switch-priority 3
nv set qos mapping default-global dscp 34 switch-priority 4
nv set qos mapping default-global dscp 48 switch-priority 6
nv set qos traffic-pool default-lossy memory-percent 50
nv set qos traffic-pool default-lossy switch-priority 0-2,5-7
nv set qos traffic-pool default-lossless memory-percent 50
nv set qos traffic-pool default-lossless switch-priority 3,4
nv set qos pfc default-global switch-priority 3,4
nv set qos pfc default-global tx enable
nv set qos pfc default-global rx enable
nv set qos congestion-control default-global traffic-class 3,4 ecn enable
nv set qos congestion-control default-global traffic-class 3,4 min-threshold 153600
nv set qos congestion-control default-global traffic-class 3,4 max-threshold 1536000
nv set qos congestion-control default-global traffic-class 3,4 probability 100
nv set qos pfc-watchdog polling-interval 100
nv set qos pfc-watchdog robustness 2
nv set qos egress-scheduler default-global traffic-class 6 mode strict
nv set interface swp1 description 'to sw01-l swp20'
nv set interface swp1 link mtu 9216
nv set interface swp1 ip vrf Vrf101
nv set interface swp1 ip address 10.255.0.48/31
nv set interface swp1 qos pfc-watchdog
nv set interface swp2 description 'to sw02-l swp20'
nv set interface swp2 link mtu 9216
nv set interface swp2 ip vrf Vrf101
nv set interface swp2 ip address 10.255.0.50/31
nv set interface swp2 qos pfc-watchdog
nv set interface swp3 description 'to sw03-l swp20'
nv set interface swp3 link mtu 9216
nv set interface swp3 ip vrf Vrf101
nv set interface swp3 ip address 10.255.0.52/31
nv set interface swp3 qos pfc-watchdog
nv set interface swp4 description 'to sw04-l swp20'
nv set interface swp4 link mtu 9216
nv set interface swp4 ip vrf Vrf101
nv set interface swp4 ip address 10.255.0.54/31
nv set interface swp4 qos pfc-watchdog
nv set interface swp5 description 'to sw05-l swp20'
nv set interface swp5 link mtu 9216
nv set interface swp5 ip vrf Vrf101
nv set interface swp5 ip address 10.255.0.56/31
nv set interface swp5 qos pfc-watchdog
nv set interface swp6 description 'to sw06-l swp20'
nv set interface swp6 link mtu 9216
nv set interface swp6 ip vrf Vrf101
nv set interface swp6 ip address 10.255.0.58/31
nv set interface swp6 qos pfc-watchdog
nv set interface swp7 description 'to sw07-l swp20'
nv set interface swp7 link mtu 9216
nv set interface swp7 ip vrf Vrf101
nv set interface swp7 ip address 10.255.0.60/31
nv set interface swp7 qos pfc-watchdog
nv set interface swp8 description 'to sw08-l swp20'
nv set interface swp8 link mtu 9216
nv set interface swp8 ip vrf Vrf101
nv set interface swp8 ip address 10.255.0.62/31
nv set interface swp8 qos pfc-watchdog
nv set interface swp9 description 'node07 mlx5_0 (gpu0)'
nv set interface swp9 link mtu 9216
nv set interface swp9 bridge domain br_default access 101
nv set interface swp9 qos pfc-watchdog
nv set interface swp10 description 'node07 mlx5_1 (gpu1)'
nv set interface swp10 link mtu 9216
nv set interface swp10 bridge domain br_default access 101
nv set interface swp10 qos pfc-watchdog
nv set interface swp11 description 'node07 mlx5_2 (gpu2)'
nv set interface swp11 link mtu 9216
nv set interface swp11 bridge domain br_default access 101
nv set interface swp11 qos pfc-watchdog
nv set interface swp12 description 'node07 mlx5_3 (gpu3)'
nv set interface swp12 link mtu 9216
nv set interface swp12 bridge domain br_default access 101
nv set interface swp12 qos pfc-watchdog
nv set interface swp13 description 'free for growth in sw04-u'
nv set interface swp13 link state down
nv set interface swp14 description 'free for growth in sw04-u'
nv set interface swp14 link state down
nv set interface swp15 description 'free for growth in sw04-u'
nv set interface swp15 link state down
nv set interface swp16 description 'free for growth in sw04-u'
nv set interface swp16 link state down
nv set interface swp17 description 'to sw01-u swp4'
nv set interface swp17 link mtu 9216
nv set interface swp17 ip vrf Vrf102
nv set interface swp17 ip address 10.255.0.7/31
nv set interface swp17 qos pfc-watchdog
nv set interface swp18 description 'to sw02-u swp4'
nv set interface swp18 link mtu 9216
nv set interface swp18 ip vrf Vrf102
nv set interface swp18 ip address 10.255.0.23/31
nv set interface swp18 qos pfc-watchdog
nv set interface swp19 description 'to sw03-u swp4'
nv set interface swp19 link mtu 9216
nv set interface swp19 ip vrf Vrf102
nv set interface swp19 ip address 10.255.0.39/31
nv set interface swp19 qos pfc-watchdog
nv set interface swp20 description 'to sw04-u swp4'
nv set interface swp20 link mtu 9216
nv set interface swp20 ip vrf Vrf102
nv set interface swp20 ip address 10.255.0.55/31
nv set interface swp20 qos pfc-watchdog
nv set interface swp21 description 'to sw05-u swp4'
nv set interface swp21 link mtu 9216
nv set interface swp21 ip vrf Vrf102
nv set interface swp21 ip address 10.255.0.71/31
nv set interface swp21 qos pfc-watchdog
nv set interface swp22 description 'to sw06-u swp4'
nv set interface swp22 link mtu 9216
nv set interface swp22 ip vrf Vrf102
nv set interface swp22 ip address 10.255.0.87/31
nv set interface swp22 qos pfc-watchdog
nv set interface swp23 description 'to sw07-u swp4'
nv set interface swp23 link mtu 9216
nv set interface swp23 ip vrf Vrf102
nv set interface swp23 ip address 10.255.0.103/31
nv set interface swp23 qos pfc-watchdog
nv set interface swp24 description 'to sw08-u swp4'
nv set interface swp24 link mtu 9216
nv set interface swp24 ip vrf Vrf102
nv set interface swp24 ip address 10.255.0.119/31
nv set interface swp24 qos pfc-watchdog
nv set interface swp25 description 'node08 mlx5_0 (gpu0)'
nv set interface swp25 link mtu 9216
nv set interface swp25 bridge domain br_default access 102
nv set interface swp25 qos pfc-watchdog
nv set interface swp26 description 'node08 mlx5_1 (gpu1)'
nv set interface swp26 link mtu 9216
nv set interface swp26 bridge domain br_default access 102
nv set interface swp26 qos pfc-watchdog
nv set interface swp27 description 'node08 mlx5_2 (gpu2)'
nv set interface swp27 link mtu 9216
nv set interface swp27 bridge domain br_default access 102
nv set interface swp27 qos pfc-watchdog
nv set interface swp28 description 'node08 mlx5_3 (gpu3)'
nv set interface swp28 link mtu 9216
nv set interface swp28 bridge domain br_default access 102
nv set interface swp28 qos pfc-watchdog
nv set interface swp29 description 'free for growth in sw04-l'
nv set interface swp29 link state down
nv set interface swp30 description 'free for growth in sw04-l'
nv set interface swp30 link state down
nv set interface swp31 description 'free for growth in sw04-l'
nv set interface swp31 link state down
nv set interface swp32 description 'free for growth in sw04-l'
nv set interface swp32 link state down
nv set interface vlan101 ip vrf Vrf101
nv set interface vlan101 ip address 10.100.7.254/24
nv set interface vlan102 ip vrf Vrf102
nv set interface vlan102 ip address 10.100.8.254/24
nv set router bgp enable on
nv set router bgp autonomous-system 4200000006
nv set router bfd enable on
nv set vrf Vrf101 router bgp enable on
nv set vrf Vrf101 router bgp autonomous-system 4200000006
nv set vrf Vrf101 router bgp router-id 10.255.0.48
nv set vrf Vrf101 router bgp path-selection multipath aspath-ignore on
nv set vrf Vrf101 router bgp address-family ipv4-unicast enable on
nv set vrf Vrf101 router bgp address-family ipv4-unicast multipaths ebgp 8
nv set vrf Vrf101 router bgp address-family ipv4-unicast network 10.100.7.0/24
nv set vrf Vrf101 router bgp neighbor 10.255.0.49 remote-as 4200000001
nv set vrf Vrf101 router bgp neighbor 10.255.0.49 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.49 description 'to sw01-l swp20'
nv set vrf Vrf101 router bgp neighbor 10.255.0.49 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.49 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.49 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.49 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.51 remote-as 4200000003
nv set vrf Vrf101 router bgp neighbor 10.255.0.51 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.51 description 'to sw02-l swp20'
nv set vrf Vrf101 router bgp neighbor 10.255.0.51 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.51 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.51 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.51 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.53 remote-as 4200000005
nv set vrf Vrf101 router bgp neighbor 10.255.0.53 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.53 description 'to sw03-l swp20'
nv set vrf Vrf101 router bgp neighbor 10.255.0.53 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.53 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.53 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.53 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.55 remote-as 4200000007
nv set vrf Vrf101 router bgp neighbor 10.255.0.55 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.55 description 'to sw04-l swp20'
nv set vrf Vrf101 router bgp neighbor 10.255.0.55 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.55 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.55 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.55 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.57 remote-as 4200000009
nv set vrf Vrf101 router bgp neighbor 10.255.0.57 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.57 description 'to sw05-l swp20'
nv set vrf Vrf101 router bgp neighbor 10.255.0.57 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.57 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.57 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.57 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.59 remote-as 4200000011
nv set vrf Vrf101 router bgp neighbor 10.255.0.59 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.59 description 'to sw06-l swp20'
nv set vrf Vrf101 router bgp neighbor 10.255.0.59 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.59 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.59 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.59 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.61 remote-as 4200000013
nv set vrf Vrf101 router bgp neighbor 10.255.0.61 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.61 description 'to sw07-l swp20'
nv set vrf Vrf101 router bgp neighbor 10.255.0.61 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.61 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.61 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.61 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.63 remote-as 4200000015
nv set vrf Vrf101 router bgp neighbor 10.255.0.63 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.63 description 'to sw08-l swp20'
nv set vrf Vrf101 router bgp neighbor 10.255.0.63 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.63 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.63 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.63 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp enable on
nv set vrf Vrf102 router bgp autonomous-system 4200000007
nv set vrf Vrf102 router bgp router-id 10.255.0.7
nv set vrf Vrf102 router bgp path-selection multipath aspath-ignore on
nv set vrf Vrf102 router bgp address-family ipv4-unicast enable on
nv set vrf Vrf102 router bgp address-family ipv4-unicast multipaths ebgp 8
nv set vrf Vrf102 router bgp address-family ipv4-unicast network 10.100.8.0/24
nv set vrf Vrf102 router bgp neighbor 10.255.0.6 remote-as 4200000000
nv set vrf Vrf102 router bgp neighbor 10.255.0.6 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.6 description 'to sw01-u swp4'
nv set vrf Vrf102 router bgp neighbor 10.255.0.6 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.6 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.6 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.6 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.22 remote-as 4200000002
nv set vrf Vrf102 router bgp neighbor 10.255.0.22 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.22 description 'to sw02-u swp4'
nv set vrf Vrf102 router bgp neighbor 10.255.0.22 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.22 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.22 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.22 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.38 remote-as 4200000004
nv set vrf Vrf102 router bgp neighbor 10.255.0.38 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.38 description 'to sw03-u swp4'
nv set vrf Vrf102 router bgp neighbor 10.255.0.38 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.38 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.38 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.38 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.54 remote-as 4200000006
nv set vrf Vrf102 router bgp neighbor 10.255.0.54 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.54 description 'to sw04-u swp4'
nv set vrf Vrf102 router bgp neighbor 10.255.0.54 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.54 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.54 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.54 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.70 remote-as 4200000008
nv set vrf Vrf102 router bgp neighbor 10.255.0.70 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.70 description 'to sw05-u swp4'
nv set vrf Vrf102 router bgp neighbor 10.255.0.70 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.70 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.70 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.70 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.86 remote-as 4200000010
nv set vrf Vrf102 router bgp neighbor 10.255.0.86 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.86 description 'to sw06-u swp4'
nv set vrf Vrf102 router bgp neighbor 10.255.0.86 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.86 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.86 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.86 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.102 remote-as 4200000012
nv set vrf Vrf102 router bgp neighbor 10.255.0.102 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.102 description 'to sw07-u swp4'
nv set vrf Vrf102 router bgp neighbor 10.255.0.102 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.102 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.102 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.102 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.118 remote-as 4200000014
nv set vrf Vrf102 router bgp neighbor 10.255.0.118 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.118 description 'to sw08-u swp4'
nv set vrf Vrf102 router bgp neighbor 10.255.0.118 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.118 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.118 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.118 bfd min-tx-interval 300
