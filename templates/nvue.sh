#!/bin/sh
# {{ summary }}
# NVUE commands rendered by planner for Cumulus Linux 5 (5.15 and later
# spell `nv set service lldp` as `nv set system lldp`). Run this on the
# switch, review with `nv config diff`, then apply with `nv config apply`.
set -e
nv set system hostname {{ hostname }}
nv set service lldp
{%- for v in vrfs %}
nv set vrf {{ v }} table auto
{%- endfor %}
nv set bridge domain br_default vlan {{ vlans }}
nv set qos mapping default-global trust l3
{%- for line in dscp_lines %}
{{ line }}
{%- endfor %}
{%- if !lossless.is_empty() %}
nv set qos traffic-pool default-lossy memory-percent 50
nv set qos traffic-pool default-lossy switch-priority {{ lossy }}
nv set qos traffic-pool default-lossless memory-percent 50
nv set qos traffic-pool default-lossless switch-priority {{ lossless }}
nv set qos pfc default-global switch-priority {{ lossless }}
nv set qos pfc default-global tx enable
nv set qos pfc default-global rx enable
nv set qos congestion-control default-global traffic-class {{ lossless }} ecn enable
nv set qos congestion-control default-global traffic-class {{ lossless }} min-threshold {{ ecn_min }}
nv set qos congestion-control default-global traffic-class {{ lossless }} max-threshold {{ ecn_max }}
nv set qos congestion-control default-global traffic-class {{ lossless }} probability {{ ecn_probability }}
nv set qos pfc-watchdog polling-interval {{ polling }}
nv set qos pfc-watchdog robustness {{ robustness }}
{%- endif %}
nv set qos egress-scheduler default-global traffic-class {{ cnp }} mode strict
{%- for b in breakouts %}
{{ b }}
{%- endfor %}
{%- for i in interfaces %}
{%- if !i.description.is_empty() %}
nv set interface {{ i.name }} description {{ i.description }}
{%- endif %}
{%- if i.kind == "free" %}
nv set interface {{ i.name }} link state down
{%- else %}
nv set interface {{ i.name }} link mtu {{ i.mtu }}
{%- if i.kind == "routed" %}
nv set interface {{ i.name }} ip vrf {{ i.vrf }}
nv set interface {{ i.name }} ip address {{ i.address }}
{%- else %}
nv set interface {{ i.name }} bridge domain br_default access {{ i.access_vlan }}
{%- endif %}
{%- if !lossless.is_empty() %}
nv set interface {{ i.name }} qos pfc-watchdog
{%- endif %}
{%- endif %}
{%- endfor %}
{%- for v in vlan_interfaces %}
nv set interface vlan{{ v.vlan }} ip vrf {{ v.vrf }}
{%- for a in v.addresses %}
nv set interface vlan{{ v.vlan }} ip address {{ a }}
{%- endfor %}
{%- endfor %}
{%- for r in routes %}
{{ r }}
{%- endfor %}
{%- for l in bgp %}
{{ l }}
{%- endfor %}
