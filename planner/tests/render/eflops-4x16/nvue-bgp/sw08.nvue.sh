#!/bin/sh
# sw08 (H3C S9850-4C) of plan eflops-4x16 (BiGraph 4x16): sw08-u (upper, VLAN 101), sw08-l (lower, VLAN 102)
# NVUE commands rendered by planner for Cumulus Linux 5 (5.15 and later
# spell `nv set service lldp` as `nv set system lldp`). Run this on the
# switch, review with `nv config diff`, then apply with `nv config apply`.
set -e
nv set system hostname sw08
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
nv set interface swp1 description 'to sw01-l swp24'
nv set interface swp1 link mtu 9216
nv set interface swp1 ip vrf Vrf101
nv set interface swp1 ip address 10.255.0.112/31
nv set interface swp1 qos pfc-watchdog
nv set interface swp2 description 'to sw02-l swp24'
nv set interface swp2 link mtu 9216
nv set interface swp2 ip vrf Vrf101
nv set interface swp2 ip address 10.255.0.114/31
nv set interface swp2 qos pfc-watchdog
nv set interface swp3 description 'to sw03-l swp24'
nv set interface swp3 link mtu 9216
nv set interface swp3 ip vrf Vrf101
nv set interface swp3 ip address 10.255.0.116/31
nv set interface swp3 qos pfc-watchdog
nv set interface swp4 description 'to sw04-l swp24'
nv set interface swp4 link mtu 9216
nv set interface swp4 ip vrf Vrf101
nv set interface swp4 ip address 10.255.0.118/31
nv set interface swp4 qos pfc-watchdog
nv set interface swp5 description 'to sw05-l swp24'
nv set interface swp5 link mtu 9216
nv set interface swp5 ip vrf Vrf101
nv set interface swp5 ip address 10.255.0.120/31
nv set interface swp5 qos pfc-watchdog
nv set interface swp6 description 'to sw06-l swp24'
nv set interface swp6 link mtu 9216
nv set interface swp6 ip vrf Vrf101
nv set interface swp6 ip address 10.255.0.122/31
nv set interface swp6 qos pfc-watchdog
nv set interface swp7 description 'to sw07-l swp24'
nv set interface swp7 link mtu 9216
nv set interface swp7 ip vrf Vrf101
nv set interface swp7 ip address 10.255.0.124/31
nv set interface swp7 qos pfc-watchdog
nv set interface swp8 description 'to sw08-l swp24'
nv set interface swp8 link mtu 9216
nv set interface swp8 ip vrf Vrf101
nv set interface swp8 ip address 10.255.0.126/31
nv set interface swp8 qos pfc-watchdog
nv set interface swp9 description 'node15 mlx5_0 (gpu0)'
nv set interface swp9 link mtu 9216
nv set interface swp9 bridge domain br_default access 101
nv set interface swp9 qos pfc-watchdog
nv set interface swp10 description 'node15 mlx5_1 (gpu1)'
nv set interface swp10 link mtu 9216
nv set interface swp10 bridge domain br_default access 101
nv set interface swp10 qos pfc-watchdog
nv set interface swp11 description 'node15 mlx5_2 (gpu2)'
nv set interface swp11 link mtu 9216
nv set interface swp11 bridge domain br_default access 101
nv set interface swp11 qos pfc-watchdog
nv set interface swp12 description 'node15 mlx5_3 (gpu3)'
nv set interface swp12 link mtu 9216
nv set interface swp12 bridge domain br_default access 101
nv set interface swp12 qos pfc-watchdog
nv set interface swp13 description 'free for growth in sw08-u'
nv set interface swp13 link state down
nv set interface swp14 description 'free for growth in sw08-u'
nv set interface swp14 link state down
nv set interface swp15 description 'free for growth in sw08-u'
nv set interface swp15 link state down
nv set interface swp16 description 'free for growth in sw08-u'
nv set interface swp16 link state down
nv set interface swp17 description 'to sw01-u swp8'
nv set interface swp17 link mtu 9216
nv set interface swp17 ip vrf Vrf102
nv set interface swp17 ip address 10.255.0.15/31
nv set interface swp17 qos pfc-watchdog
nv set interface swp18 description 'to sw02-u swp8'
nv set interface swp18 link mtu 9216
nv set interface swp18 ip vrf Vrf102
nv set interface swp18 ip address 10.255.0.31/31
nv set interface swp18 qos pfc-watchdog
nv set interface swp19 description 'to sw03-u swp8'
nv set interface swp19 link mtu 9216
nv set interface swp19 ip vrf Vrf102
nv set interface swp19 ip address 10.255.0.47/31
nv set interface swp19 qos pfc-watchdog
nv set interface swp20 description 'to sw04-u swp8'
nv set interface swp20 link mtu 9216
nv set interface swp20 ip vrf Vrf102
nv set interface swp20 ip address 10.255.0.63/31
nv set interface swp20 qos pfc-watchdog
nv set interface swp21 description 'to sw05-u swp8'
nv set interface swp21 link mtu 9216
nv set interface swp21 ip vrf Vrf102
nv set interface swp21 ip address 10.255.0.79/31
nv set interface swp21 qos pfc-watchdog
nv set interface swp22 description 'to sw06-u swp8'
nv set interface swp22 link mtu 9216
nv set interface swp22 ip vrf Vrf102
nv set interface swp22 ip address 10.255.0.95/31
nv set interface swp22 qos pfc-watchdog
nv set interface swp23 description 'to sw07-u swp8'
nv set interface swp23 link mtu 9216
nv set interface swp23 ip vrf Vrf102
nv set interface swp23 ip address 10.255.0.111/31
nv set interface swp23 qos pfc-watchdog
nv set interface swp24 description 'to sw08-u swp8'
nv set interface swp24 link mtu 9216
nv set interface swp24 ip vrf Vrf102
nv set interface swp24 ip address 10.255.0.127/31
nv set interface swp24 qos pfc-watchdog
nv set interface swp25 description 'node16 mlx5_0 (gpu0)'
nv set interface swp25 link mtu 9216
nv set interface swp25 bridge domain br_default access 102
nv set interface swp25 qos pfc-watchdog
nv set interface swp26 description 'node16 mlx5_1 (gpu1)'
nv set interface swp26 link mtu 9216
nv set interface swp26 bridge domain br_default access 102
nv set interface swp26 qos pfc-watchdog
nv set interface swp27 description 'node16 mlx5_2 (gpu2)'
nv set interface swp27 link mtu 9216
nv set interface swp27 bridge domain br_default access 102
nv set interface swp27 qos pfc-watchdog
nv set interface swp28 description 'node16 mlx5_3 (gpu3)'
nv set interface swp28 link mtu 9216
nv set interface swp28 bridge domain br_default access 102
nv set interface swp28 qos pfc-watchdog
nv set interface swp29 description 'free for growth in sw08-l'
nv set interface swp29 link state down
nv set interface swp30 description 'free for growth in sw08-l'
nv set interface swp30 link state down
nv set interface swp31 description 'free for growth in sw08-l'
nv set interface swp31 link state down
nv set interface swp32 description 'free for growth in sw08-l'
nv set interface swp32 link state down
nv set interface vlan101 ip vrf Vrf101
nv set interface vlan101 ip address 10.100.15.254/24
nv set interface vlan102 ip vrf Vrf102
nv set interface vlan102 ip address 10.100.16.254/24
nv set router bgp enable on
nv set router bgp autonomous-system 4200000014
nv set router bfd enable on
nv set vrf Vrf101 router bgp enable on
nv set vrf Vrf101 router bgp autonomous-system 4200000014
nv set vrf Vrf101 router bgp router-id 10.255.0.112
nv set vrf Vrf101 router bgp path-selection multipath aspath-ignore on
nv set vrf Vrf101 router bgp address-family ipv4-unicast enable on
nv set vrf Vrf101 router bgp address-family ipv4-unicast multipaths ebgp 8
nv set vrf Vrf101 router bgp address-family ipv4-unicast network 10.100.15.0/24
nv set vrf Vrf101 router bgp neighbor 10.255.0.113 remote-as 4200000001
nv set vrf Vrf101 router bgp neighbor 10.255.0.113 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.113 description 'to sw01-l swp24'
nv set vrf Vrf101 router bgp neighbor 10.255.0.113 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.113 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.113 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.113 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.115 remote-as 4200000003
nv set vrf Vrf101 router bgp neighbor 10.255.0.115 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.115 description 'to sw02-l swp24'
nv set vrf Vrf101 router bgp neighbor 10.255.0.115 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.115 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.115 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.115 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.117 remote-as 4200000005
nv set vrf Vrf101 router bgp neighbor 10.255.0.117 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.117 description 'to sw03-l swp24'
nv set vrf Vrf101 router bgp neighbor 10.255.0.117 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.117 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.117 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.117 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.119 remote-as 4200000007
nv set vrf Vrf101 router bgp neighbor 10.255.0.119 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.119 description 'to sw04-l swp24'
nv set vrf Vrf101 router bgp neighbor 10.255.0.119 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.119 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.119 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.119 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.121 remote-as 4200000009
nv set vrf Vrf101 router bgp neighbor 10.255.0.121 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.121 description 'to sw05-l swp24'
nv set vrf Vrf101 router bgp neighbor 10.255.0.121 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.121 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.121 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.121 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.123 remote-as 4200000011
nv set vrf Vrf101 router bgp neighbor 10.255.0.123 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.123 description 'to sw06-l swp24'
nv set vrf Vrf101 router bgp neighbor 10.255.0.123 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.123 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.123 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.123 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.125 remote-as 4200000013
nv set vrf Vrf101 router bgp neighbor 10.255.0.125 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.125 description 'to sw07-l swp24'
nv set vrf Vrf101 router bgp neighbor 10.255.0.125 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.125 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.125 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.125 bfd min-tx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.127 remote-as 4200000015
nv set vrf Vrf101 router bgp neighbor 10.255.0.127 type numbered
nv set vrf Vrf101 router bgp neighbor 10.255.0.127 description 'to sw08-l swp24'
nv set vrf Vrf101 router bgp neighbor 10.255.0.127 bfd enable on
nv set vrf Vrf101 router bgp neighbor 10.255.0.127 bfd detect-multiplier 3
nv set vrf Vrf101 router bgp neighbor 10.255.0.127 bfd min-rx-interval 300
nv set vrf Vrf101 router bgp neighbor 10.255.0.127 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp enable on
nv set vrf Vrf102 router bgp autonomous-system 4200000015
nv set vrf Vrf102 router bgp router-id 10.255.0.15
nv set vrf Vrf102 router bgp path-selection multipath aspath-ignore on
nv set vrf Vrf102 router bgp address-family ipv4-unicast enable on
nv set vrf Vrf102 router bgp address-family ipv4-unicast multipaths ebgp 8
nv set vrf Vrf102 router bgp address-family ipv4-unicast network 10.100.16.0/24
nv set vrf Vrf102 router bgp neighbor 10.255.0.14 remote-as 4200000000
nv set vrf Vrf102 router bgp neighbor 10.255.0.14 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.14 description 'to sw01-u swp8'
nv set vrf Vrf102 router bgp neighbor 10.255.0.14 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.14 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.14 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.14 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.30 remote-as 4200000002
nv set vrf Vrf102 router bgp neighbor 10.255.0.30 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.30 description 'to sw02-u swp8'
nv set vrf Vrf102 router bgp neighbor 10.255.0.30 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.30 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.30 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.30 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.46 remote-as 4200000004
nv set vrf Vrf102 router bgp neighbor 10.255.0.46 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.46 description 'to sw03-u swp8'
nv set vrf Vrf102 router bgp neighbor 10.255.0.46 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.46 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.46 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.46 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.62 remote-as 4200000006
nv set vrf Vrf102 router bgp neighbor 10.255.0.62 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.62 description 'to sw04-u swp8'
nv set vrf Vrf102 router bgp neighbor 10.255.0.62 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.62 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.62 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.62 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.78 remote-as 4200000008
nv set vrf Vrf102 router bgp neighbor 10.255.0.78 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.78 description 'to sw05-u swp8'
nv set vrf Vrf102 router bgp neighbor 10.255.0.78 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.78 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.78 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.78 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.94 remote-as 4200000010
nv set vrf Vrf102 router bgp neighbor 10.255.0.94 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.94 description 'to sw06-u swp8'
nv set vrf Vrf102 router bgp neighbor 10.255.0.94 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.94 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.94 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.94 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.110 remote-as 4200000012
nv set vrf Vrf102 router bgp neighbor 10.255.0.110 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.110 description 'to sw07-u swp8'
nv set vrf Vrf102 router bgp neighbor 10.255.0.110 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.110 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.110 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.110 bfd min-tx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.126 remote-as 4200000014
nv set vrf Vrf102 router bgp neighbor 10.255.0.126 type numbered
nv set vrf Vrf102 router bgp neighbor 10.255.0.126 description 'to sw08-u swp8'
nv set vrf Vrf102 router bgp neighbor 10.255.0.126 bfd enable on
nv set vrf Vrf102 router bgp neighbor 10.255.0.126 bfd detect-multiplier 3
nv set vrf Vrf102 router bgp neighbor 10.255.0.126 bfd min-rx-interval 300
nv set vrf Vrf102 router bgp neighbor 10.255.0.126 bfd min-tx-interval 300
