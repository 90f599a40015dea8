#!/bin/sh
# sw03 (H3C S9850-4C) of plan eflops-4x16 (BiGraph 4x16): sw03-u (upper, VLAN 101), sw03-l (lower, VLAN 102)
# NVUE commands rendered by planner for Cumulus Linux 5 (5.15 and later
# spell `nv set service lldp` as `nv set system lldp`). Run this on the
# switch, review with `nv config diff`, then apply with `nv config apply`.
set -e
nv set system hostname sw03
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
nv set interface swp1 description 'to sw01-l swp19'
nv set interface swp1 link mtu 9216
nv set interface swp1 ip vrf Vrf101
nv set interface swp1 ip address 10.255.0.32/31
nv set interface swp1 qos pfc-watchdog
nv set interface swp2 description 'to sw02-l swp19'
nv set interface swp2 link mtu 9216
nv set interface swp2 ip vrf Vrf101
nv set interface swp2 ip address 10.255.0.34/31
nv set interface swp2 qos pfc-watchdog
nv set interface swp3 description 'to sw03-l swp19'
nv set interface swp3 link mtu 9216
nv set interface swp3 ip vrf Vrf101
nv set interface swp3 ip address 10.255.0.36/31
nv set interface swp3 qos pfc-watchdog
nv set interface swp4 description 'to sw04-l swp19'
nv set interface swp4 link mtu 9216
nv set interface swp4 ip vrf Vrf101
nv set interface swp4 ip address 10.255.0.38/31
nv set interface swp4 qos pfc-watchdog
nv set interface swp5 description 'to sw05-l swp19'
nv set interface swp5 link mtu 9216
nv set interface swp5 ip vrf Vrf101
nv set interface swp5 ip address 10.255.0.40/31
nv set interface swp5 qos pfc-watchdog
nv set interface swp6 description 'to sw06-l swp19'
nv set interface swp6 link mtu 9216
nv set interface swp6 ip vrf Vrf101
nv set interface swp6 ip address 10.255.0.42/31
nv set interface swp6 qos pfc-watchdog
nv set interface swp7 description 'to sw07-l swp19'
nv set interface swp7 link mtu 9216
nv set interface swp7 ip vrf Vrf101
nv set interface swp7 ip address 10.255.0.44/31
nv set interface swp7 qos pfc-watchdog
nv set interface swp8 description 'to sw08-l swp19'
nv set interface swp8 link mtu 9216
nv set interface swp8 ip vrf Vrf101
nv set interface swp8 ip address 10.255.0.46/31
nv set interface swp8 qos pfc-watchdog
nv set interface swp9 description 'node05 mlx5_0 (gpu0)'
nv set interface swp9 link mtu 9216
nv set interface swp9 bridge domain br_default access 101
nv set interface swp9 qos pfc-watchdog
nv set interface swp10 description 'node05 mlx5_1 (gpu1)'
nv set interface swp10 link mtu 9216
nv set interface swp10 bridge domain br_default access 101
nv set interface swp10 qos pfc-watchdog
nv set interface swp11 description 'node05 mlx5_2 (gpu2)'
nv set interface swp11 link mtu 9216
nv set interface swp11 bridge domain br_default access 101
nv set interface swp11 qos pfc-watchdog
nv set interface swp12 description 'node05 mlx5_3 (gpu3)'
nv set interface swp12 link mtu 9216
nv set interface swp12 bridge domain br_default access 101
nv set interface swp12 qos pfc-watchdog
nv set interface swp13 description 'free for growth in sw03-u'
nv set interface swp13 link state down
nv set interface swp14 description 'free for growth in sw03-u'
nv set interface swp14 link state down
nv set interface swp15 description 'free for growth in sw03-u'
nv set interface swp15 link state down
nv set interface swp16 description 'free for growth in sw03-u'
nv set interface swp16 link state down
nv set interface swp17 description 'to sw01-u swp3'
nv set interface swp17 link mtu 9216
nv set interface swp17 ip vrf Vrf102
nv set interface swp17 ip address 10.255.0.5/31
nv set interface swp17 qos pfc-watchdog
nv set interface swp18 description 'to sw02-u swp3'
nv set interface swp18 link mtu 9216
nv set interface swp18 ip vrf Vrf102
nv set interface swp18 ip address 10.255.0.21/31
nv set interface swp18 qos pfc-watchdog
nv set interface swp19 description 'to sw03-u swp3'
nv set interface swp19 link mtu 9216
nv set interface swp19 ip vrf Vrf102
nv set interface swp19 ip address 10.255.0.37/31
nv set interface swp19 qos pfc-watchdog
nv set interface swp20 description 'to sw04-u swp3'
nv set interface swp20 link mtu 9216
nv set interface swp20 ip vrf Vrf102
nv set interface swp20 ip address 10.255.0.53/31
nv set interface swp20 qos pfc-watchdog
nv set interface swp21 description 'to sw05-u swp3'
nv set interface swp21 link mtu 9216
nv set interface swp21 ip vrf Vrf102
nv set interface swp21 ip address 10.255.0.69/31
nv set interface swp21 qos pfc-watchdog
nv set interface swp22 description 'to sw06-u swp3'
nv set interface swp22 link mtu 9216
nv set interface swp22 ip vrf Vrf102
nv set interface swp22 ip address 10.255.0.85/31
nv set interface swp22 qos pfc-watchdog
nv set interface swp23 description 'to sw07-u swp3'
nv set interface swp23 link mtu 9216
nv set interface swp23 ip vrf Vrf102
nv set interface swp23 ip address 10.255.0.101/31
nv set interface swp23 qos pfc-watchdog
nv set interface swp24 description 'to sw08-u swp3'
nv set interface swp24 link mtu 9216
nv set interface swp24 ip vrf Vrf102
nv set interface swp24 ip address 10.255.0.117/31
nv set interface swp24 qos pfc-watchdog
nv set interface swp25 description 'node06 mlx5_0 (gpu0)'
nv set interface swp25 link mtu 9216
nv set interface swp25 bridge domain br_default access 102
nv set interface swp25 qos pfc-watchdog
nv set interface swp26 description 'node06 mlx5_1 (gpu1)'
nv set interface swp26 link mtu 9216
nv set interface swp26 bridge domain br_default access 102
nv set interface swp26 qos pfc-watchdog
nv set interface swp27 description 'node06 mlx5_2 (gpu2)'
nv set interface swp27 link mtu 9216
nv set interface swp27 bridge domain br_default access 102
nv set interface swp27 qos pfc-watchdog
nv set interface swp28 description 'node06 mlx5_3 (gpu3)'
nv set interface swp28 link mtu 9216
nv set interface swp28 bridge domain br_default access 102
nv set interface swp28 qos pfc-watchdog
nv set interface swp29 description 'free for growth in sw03-l'
nv set interface swp29 link state down
nv set interface swp30 description 'free for growth in sw03-l'
nv set interface swp30 link state down
nv set interface swp31 description 'free for growth in sw03-l'
nv set interface swp31 link state down
nv set interface swp32 description 'free for growth in sw03-l'
nv set interface swp32 link state down
nv set interface vlan101 ip vrf Vrf101
nv set interface vlan101 ip address 10.100.5.254/24
nv set interface vlan102 ip vrf Vrf102
nv set interface vlan102 ip address 10.100.6.254/24
nv set router bgp enable on
nv set router bgp autonomous-system 4200000004
nv set router bfd enable on
nv set vrf Vrf101 router bgp enable on
nv set vrf Vrf101 router bgp autonomous-system 4200000004
nv set vrf Vrf101 router bgp router-id 10.255.0.32
nv set vrf Vrf101 router bgp path-selection multipath aspath-ignore on
nv set vrf Vrf101 router bgp address-family ipv4-unicast enable on
nv set vrf Vrf101 router bgp address-family ipv4-unicast multipaths ebgp 8
nv set vrf Vrf101 router bgp address-family ipv4-unicast network 10.100.5.0/24
nv set vrf Vrf101 router bgp neighbor 10.255.0.33 remote-as 4200000001
nv set vrf Vrf101 router bgp neighbor 10.255.0.33 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.33 description 'to sw01-l swp19'
nv set vrf Vrf101 router bgp neighbor 10.255.0.33 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.33 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.33 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.33 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.35 remote-as 4200000003
nv set vrf Vrf101 router bgp neighbor 10.255.0.35 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.35 description 'to sw02-l swp19'
nv set vrf Vrf101 router bgp neighbor 10.255.0.35 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.35 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.35 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.35 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.37 remote-as 4200000005
nv set vrf Vrf101 router bgp neighbor 10.255.0.37 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.37 description 'to sw03-l swp19'
nv set vrf Vrf101 router bgp neighbor 10.255.0.37 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.37 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.37 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.37 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.39 remote-as 4200000007
nv set vrf Vrf101 router bgp neighbor 10.255.0.39 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.39 description 'to sw04-l swp19'
nv set vrf Vrf101 router bgp neighbor 10.255.0.39 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.39 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.39 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.39 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.41 remote-as 4200000009
nv set vrf Vrf101 router bgp neighbor 10.255.0.41 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.41 description 'to sw05-l swp19'
nv set vrf Vrf101 router bgp neighbor 10.255.0.41 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.41 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.41 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.41 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.43 remote-as 4200000011
nv set vrf Vrf101 router bgp neighbor 10.255.0.43 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.43 description 'to sw06-l swp19'
nv set vrf Vrf101 router bgp neighbor 10.255.0.43 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.43 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.43 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.43 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.45 remote-as 4200000013
nv set vrf Vrf101 router bgp neighbor 10.255.0.45 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.45 description 'to sw07-l swp19'
nv set vrf Vrf101 router bgp neighbor 10.255.0.45 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.45 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.45 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.45 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.47 remote-as 4200000015
nv set vrf Vrf101 router bgp neighbor 10.255.0.47 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.47 description 'to sw08-l swp19'
nv set vrf Vrf101 router bgp neighbor 10.255.0.47 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.47 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.47 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.47 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp enable on
nv set vrf Vrf102 router bgp autonomous-system 4200000005
nv set vrf Vrf102 router bgp router-id 10.255.0.5
nv set vrf Vrf102 router bgp path-selection multipath aspath-ignore on
nv set vrf Vrf102 router bgp address-family ipv4-unicast enable on
nv set vrf Vrf102 router bgp address-family ipv4-unicast multipaths ebgp 8
nv set vrf Vrf102 router bgp address-family ipv4-unicast network 10.100.6.0/24
nv set vrf Vrf102 router bgp neighbor 10.255.0.4 remote-as 4200000000
nv set vrf Vrf102 router bgp neighbor 10.255.0.4 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.4 description 'to sw01-u swp3'
nv set vrf Vrf102 router bgp neighbor 10.255.0.4 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.4 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.4 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.4 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.20 remote-as 4200000002
nv set vrf Vrf102 router bgp neighbor 10.255.0.20 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.20 description 'to sw02-u swp3'
nv set vrf Vrf102 router bgp neighbor 10.255.0.20 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.20 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.20 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.20 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.36 remote-as 4200000004
nv set vrf Vrf102 router bgp neighbor 10.255.0.36 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.36 description 'to sw03-u swp3'
nv set vrf Vrf102 router bgp neighbor 10.255.0.36 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.36 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.36 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.36 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.52 remote-as 4200000006
nv set vrf Vrf102 router bgp neighbor 10.255.0.52 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.52 description 'to sw04-u swp3'
nv set vrf Vrf102 router bgp neighbor 10.255.0.52 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.52 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.52 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.52 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.68 remote-as 4200000008
nv set vrf Vrf102 router bgp neighbor 10.255.0.68 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.68 description 'to sw05-u swp3'
nv set vrf Vrf102 router bgp neighbor 10.255.0.68 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.68 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.68 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.68 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.84 remote-as 4200000010
nv set vrf Vrf102 router bgp neighbor 10.255.0.84 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.84 description 'to sw06-u swp3'
nv set vrf Vrf102 router bgp neighbor 10.255.0.84 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.84 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.84 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.84 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.100 remote-as 4200000012
nv set vrf Vrf102 router bgp neighbor 10.255.0.100 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.100 description 'to sw07-u swp3'
nv set vrf Vrf102 router bgp neighbor 10.255.0.100 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.100 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.100 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.100 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.116 remote-as 4200000014
nv set vrf Vrf102 router bgp neighbor 10.255.0.116 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.116 description 'to sw08-u swp3'
nv set vrf Vrf102 router bgp neighbor 10.255.0.116 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.116 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.116 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.116 bfd min-tx-interval 300
