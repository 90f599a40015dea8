#!/bin/sh
# sw04 (4x100G switch) of plan fat-tree-3tier-16 (3-tier fat-tree k=4): sw04 (aggregation, VLAN 100)
# NVUE commands rendered by planner for Cumulus Linux 5 (5.15 and later
# spell `nv set service lldp` as `nv set system lldp`). Run this on the
# switch, review with `nv config diff`, then apply with `nv config apply`.
set -e
nv set system hostname sw04
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
nv set interface swp1 description 'to sw01 swp2'
nv set interface swp1 link mtu 9216
nv set interface swp1 ip vrf Vrf100
nv set interface swp1 ip address 10.255.0.3/31
nv set interface swp1 qos pfc-watchdog
nv set interface swp2 description 'to sw02 swp2'
nv set interface swp2 link mtu 9216
nv set interface swp2 ip vrf Vrf100
nv set interface swp2 ip address 10.255.0.7/31
nv set interface swp2 qos pfc-watchdog
nv set interface swp3 description 'to sw19 swp1'
nv set interface swp3 link mtu 9216
nv set interface swp3 ip vrf Vrf100
nv set interface swp3 ip address 10.255.0.12/31
nv set interface swp3 qos pfc-watchdog
nv set interface swp4 description 'to sw20 swp1'
nv set interface swp4 link mtu 9216
nv set interface swp4 ip vrf Vrf100
nv set interface swp4 ip address 10.255.0.14/31
nv set interface swp4 qos pfc-watchdog
nv set router bgp enable on
nv set router bgp autonomous-system 4200000003
nv set router bfd enable on
nv set vrf Vrf100 router bgp enable on
nv set vrf Vrf100 router bgp autonomous-system 4200000003
nv set vrf Vrf100 router bgp router-id 10.255.0.3
nv set vrf Vrf100 router bgp path-selection multipath aspath-ignore on
nv set vrf Vrf100 router bgp address-family ipv4-unicast enable on
nv set vrf Vrf100 router bgp address-family ipv4-unicast multipaths ebgp 4
nv set vrf Vrf100 router bgp neighbor 10.255.0.2 remote-as 4200000000
nv set vrf Vrf100 router bgp neighbor 10.255.0.2 type numbered
nv set vrf Vrf100 router bgp neighbor 10.255.0.2 description 'to sw01 swp2'
nv set vrf Vrf100 router bgp neighbor 10.255.0.2 bfd enable on
nv set vrf Vrf100 router bgp neighbor 10.255.0.2 bfd detect-multiplier 3
nv set vrf Vrf100 router bgp neighbor 10.255.0.2 bfd min-rx-interval 300
nv set vrf Vrf100 router bgp neighbor 10.255.0.2 bfd min-tx-interval 300
nv set vrf Vrf100 router bgp neighbor 10.255.0.6 remote-as 4200000001
nv set vrf Vrf100 router bgp neighbor 10.255.0.6 type numbered
nv set vrf Vrf100 router bgp neighbor 10.255.0.6 description 'to sw02 swp2'
nv set vrf Vrf100 router bgp neighbor 10.255.0.6 bfd enable on
nv set vrf Vrf100 router bgp neighbor 10.255.0.6 bfd detect-multiplier 3
nv set vrf Vrf100 router bgp neighbor 10.255.0.6 bfd min-rx-interval 300
nv set vrf Vrf100 router bgp neighbor 10.255.0.6 bfd min-tx-interval 300
nv set vrf Vrf100 router bgp neighbor 10.255.0.13 remote-as 4200000018
nv set vrf Vrf100 router bgp neighbor 10.255.0.13 type numbered
nv set vrf Vrf100 router bgp neighbor 10.255.0.13 description 'to sw19 swp1'
nv set vrf Vrf100 router bgp neighbor 10.255.0.13 bfd enable on
nv set vrf Vrf100 router bgp neighbor 10.255.0.13 bfd detect-multiplier 3
nv set vrf Vrf100 router bgp neighbor 10.255.0.13 bfd min-rx-interval 300
nv set vrf Vrf100 router bgp neighbor 10.255.0.13 bfd min-tx-interval 300
nv set vrf Vrf100 router bgp neighbor 10.255.0.15 remote-as 4200000019
nv set vrf Vrf100 router bgp neighbor 10.255.0.15 type numbered
nv set vrf Vrf100 router bgp neighbor 10.255.0.15 description 'to sw20 swp1'
nv set vrf Vrf100 router bgp neighbor 10.255.0.15 bfd enable on
nv set vrf Vrf100 router bgp neighbor 10.255.0.15 bfd detect-multiplier 3
nv set vrf Vrf100 router bgp neighbor 10.255.0.15 bfd min-rx-interval 300
nv set vrf Vrf100 router bgp neighbor 10.255.0.15 bfd min-tx-interval 300
