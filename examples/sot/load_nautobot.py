#!/usr/bin/env python3
"""Loads an inventory (topologies/*.toml) into a Nautobot 2.x/3.x as the
operator's source of truth would hold it, through Nautobot's REST API, so
that `provisioner sot import` can read it back (docs/source-of-truth.md has
the mapping). Written apart from the Rust client, with the standard library
only (Python 3.11+: tomllib, urllib).

    examples/sot/load_nautobot.py --url http://127.0.0.1:8089 \
        --token-file /var/tmp/nautobot-ci/token topologies/eflops-4x16.toml \
        [--cables examples/data/eflops-4x16.cables.csv]

Creates (when missing) the location type and location, racks, roles
`gpu-server` and `fabric-switch`, manufacturers, device types, the
`topo_*` custom fields, one device per server and switch, switch ports
and NIC interfaces, one inventory item per PCIe switch (top level) with
its GPUs and NICs as child items, and the NIC addresses (prefix, IP,
IP-to-interface). With --cables, one Connected cable per CSV row (the
`planner cables` columns switch,port,peer,peer_port). Idempotent: objects
that exist by name are left alone.
"""

import argparse
import csv
import ipaddress
import json
import re
import sys
import tomllib
import urllib.error
import urllib.request

PLACEHOLDER = re.compile(r"\{n(?:/(\d+))?(?::0?(\d+)(x?))?\}")


def expand(pattern, n, start=1):
    """`{n}`, `{n:02}`, `{n:x}` and `{n/K}`: the group of K instances n is
    in, numbered from the template's `start` (docs/inventory.md)."""

    def sub(m):
        k = int(m.group(1) or 0)
        v = (n - start) // k + start if k else n
        width = int(m.group(2) or 0)
        return format(v, f"0{width}{'x' if m.group(3) else 'd'}")

    return PLACEHOLDER.sub(sub, pattern)


def instances(template):
    count = template.get("count", 1)
    start = template.get("start", 1)
    return [start + i for i in range(count)]


class Api:
    def __init__(self, url, token):
        self.url = url.rstrip("/")
        self.token = token

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", "Token " + self.token)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=300) as r:
                text = r.read()
        except urllib.error.HTTPError as e:
            sys.exit(f"load_nautobot: {method} {path}: HTTP {e.code}: {e.read()[:2000].decode(errors='replace')}")
        return json.loads(text) if text.strip() else None

    def all(self, path, query=""):
        out = []
        page = f"{path}?limit=1000{'&' + query if query else ''}"
        while page:
            v = self.call("GET", page)
            out.extend(v["results"])
            nxt = v.get("next")
            page = nxt[nxt.index("/api/"):] if nxt else None
        return out

    def ensure(self, path, objects, key, query=""):
        """Creates the objects whose key is not there yet (one list POST);
        returns key -> object for all of them."""
        have = {key(o): o for o in self.all(path, query)}
        new = [o for o in objects if key(o) not in have]
        if new:
            for i in range(0, len(new), 500):
                created = self.call("POST", path, new[i : i + 500])
                for o in created:
                    have[key(o)] = o
        return have


class InProcess:
    """The same calls as `Api`, run inside Nautobot (`--in-process`: this
    script started with Nautobot's own Python on the Nautobot host, with
    NAUTOBOT_CONFIG set). Each call goes through the REST API's own view
    set: its serializer validates the bodies exactly as over HTTP, and its
    filter set answers the lists. What is skipped is HTTP and the change
    log (Nautobot writes an ObjectChange only inside a web request), which
    are most of the cost of a REST create (docs/benchmarks.md). Created
    objects are answered as their request body plus `id`, which is all
    `ensure` reads."""

    def __init__(self):
        import nautobot

        nautobot.setup()
        from django.db import transaction
        from django.http import QueryDict
        from django.urls import resolve
        from rest_framework.request import Request
        from rest_framework.test import APIRequestFactory
        from django.contrib.auth import get_user_model

        self.transaction, self.QueryDict, self.resolve = transaction, QueryDict, resolve
        self.Request, self.factory = Request, APIRequestFactory()
        self.user = get_user_model().objects.filter(is_superuser=True).order_by("date_joined").first()
        if self.user is None:
            sys.exit("load_nautobot: --in-process: no superuser in this Nautobot")

    def _view(self, method, path, query=""):
        viewset = self.resolve(path).func.cls
        req = self.Request(self.factory.generic(method, f"{path}?{query}", SERVER_NAME="127.0.0.1"))
        req.user = self.user
        return viewset, {"request": req}

    def call(self, method, path, body=None):
        viewset, context = self._view(method, path)
        try:
            if method == "POST":
                ser = viewset.serializer_class(data=body, many=True, context=context)
                if not ser.is_valid():
                    sys.exit(f"load_nautobot: POST {path}: {json.dumps(ser.errors)[:2000]}")
                with self.transaction.atomic():
                    created = ser.save()
                return [dict(b, id=str(o.pk)) for b, o in zip(body, created)]
            if method == "DELETE":
                with self.transaction.atomic():
                    for o in viewset.queryset.filter(pk__in=[x["id"] for x in body]):
                        o.delete()
                return None
        except Exception as e:  # a model's own validation (clean) refusing a body
            sys.exit(f"load_nautobot: {method} {path}: {e}")
        sys.exit(f"load_nautobot: --in-process does not {method}")

    def all(self, path, query=""):
        viewset, context = self._view("GET", path, query)
        qs = viewset.queryset.all()
        if getattr(viewset, "filterset_class", None):
            qs = viewset.filterset_class(self.QueryDict(query), qs, request=context["request"]).qs
        return [viewset.serializer_class(o, context=context).data for o in qs]

    def ensure(self, path, objects, key, query=""):
        return Api.ensure(self, path, objects, key, query)


def gbps_type(gbps):
    return {
        1: "1000base-t",
        10: "10gbase-x-sfpp",
        25: "25gbase-x-sfp28",
        40: "40gbase-x-qsfpp",
        50: "50gbase-x-sfp28",
        100: "100gbase-x-qsfp28",
        200: "200gbase-x-qsfp56",
        400: "400gbase-x-qsfpdd",
        800: "800gbase-x-qsfpdd",
    }.get(gbps, "other")


CUSTOM_FIELDS = [
    ("topo_sockets", "text", ["dcim.device"]),
    ("topo_virtual", "json", ["dcim.device"]),
    ("topo_reserved_ports", "text", ["dcim.device"]),
    ("topo_tier", "text", ["dcim.device"]),
    ("topo_breakout", "text", ["dcim.device"]),
    ("topo_kind", "text", ["dcim.inventoryitem"]),
    ("topo_socket", "text", ["dcim.inventoryitem"]),
    ("topo_root_port", "text", ["dcim.inventoryitem"]),
    ("topo_lanes", "integer", ["dcim.inventoryitem"]),
    ("topo_pcie_gen", "integer", ["dcim.inventoryitem"]),
    ("topo_slots", "integer", ["dcim.inventoryitem"]),
    ("topo_slot", "text", ["dcim.inventoryitem"]),
    ("topo_memory_gb", "integer", ["dcim.inventoryitem"]),
    ("topo_speed_gbps", "integer", ["dcim.inventoryitem"]),
    ("topo_ports", "integer", ["dcim.inventoryitem"]),
    ("topo_netdev", "text", ["dcim.inventoryitem"]),
]


def wipe(api, site, inv):
    def delete(path, objs):
        ids = [{"id": o["id"]} for o in objs]
        for i in range(0, len(ids), 500):
            api.call("DELETE", path, ids[i : i + 500])

    if not [l for l in api.all("/api/dcim/locations/", f"name={site}")]:
        return
    delete("/api/dcim/cables/", api.all("/api/dcim/cables/", f"location={site}"))
    delete("/api/dcim/devices/", api.all("/api/dcim/devices/", f"location={site}"))
    delete("/api/dcim/racks/", api.all("/api/dcim/racks/", f"location={site}"))
    addrs = set()
    for s in inv.get("server", []):
        for n in instances(s):
            for nic in s.get("nic", []):
                if "ip" in nic:
                    addrs.add(expand(nic["ip"], n))
    ips = [o for o in api.all("/api/ipam/ip-addresses/") if o["address"] in addrs]
    delete("/api/ipam/ip-addresses/", ips)
    nets = {str(ipaddress.ip_interface(x).network) for x in addrs}
    delete("/api/ipam/prefixes/", [o for o in api.all("/api/ipam/prefixes/") if o["prefix"] in nets])
    # Only this inventory's plan's VLANs: another plan's round trip may run
    # at another location of the same Nautobot.
    plan = "topo-plan-" + inv.get("inventory", {}).get("name", "")
    tags = [t for t in api.all("/api/extras/tags/") if t["name"] == plan]
    for t in tags:
        delete("/api/ipam/vlans/", api.all("/api/ipam/vlans/", f"tags={t['name']}"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inventory")
    ap.add_argument("--url", help="the Nautobot's base URL (REST)")
    ap.add_argument("--token-file", help="file with the API token (REST)")
    ap.add_argument("--in-process", action="store_true",
                    help="run inside Nautobot instead of over REST: start this script with "
                         "Nautobot's Python on its host, NAUTOBOT_CONFIG set (fast; no change log)")
    ap.add_argument("--location", help="location name (default: the inventory's site)")
    ap.add_argument("--cables", help="CSV switch,port,peer,peer_port: Connected cables to add")
    ap.add_argument("--wipe", action="store_true",
                    help="first delete what an earlier run (and pushes) left at the location: "
                         "its cables, devices, racks, the inventory's addresses and prefixes, "
                         "and VLANs tagged topo-plan-<inventory name>")
    a = ap.parse_args()
    if a.in_process:
        api = InProcess()
    elif a.url and a.token_file:
        with open(a.token_file) as f:
            api = Api(a.url, f.readline().strip())
    else:
        ap.error("give --url and --token-file, or --in-process")
    with open(a.inventory, "rb") as f:
        inv = tomllib.load(f)
    site = a.location or inv.get("inventory", {}).get("site") or "lab"
    active = {"name": "Active"}
    if a.wipe:
        wipe(api, site, inv)

    # Statuses Nautobot ships (Active, Connected, Planned) must cover the
    # models used here; Nautobot's migrations attach them.
    api.ensure(
        "/api/extras/custom-fields/",
        [{"key": k, "label": k, "type": t, "content_types": ct} for k, t, ct in CUSTOM_FIELDS],
        lambda o: o["key"],
    )
    lt = api.ensure(
        "/api/dcim/location-types/",
        [{"name": "Site", "content_types": ["dcim.device", "dcim.rack", "ipam.prefix", "ipam.vlan"]}],
        lambda o: o["name"],
    )["Site"]
    api.ensure(
        "/api/dcim/locations/",
        [{"name": site, "location_type": lt["id"], "status": active}],
        lambda o: o["name"],
    )
    loc = {"name": site}
    api.ensure(
        "/api/extras/roles/",
        [{"name": r, "content_types": ["dcim.device"]} for r in ("gpu-server", "fabric-switch")],
        lambda o: o["name"],
    )
    racks = []
    for r in inv.get("rack", []):
        for n in instances(r):
            racks.append({"name": expand(r["name"], n), "location": loc, "status": active})
    api.ensure("/api/dcim/racks/", racks, lambda o: o["name"])

    servers = [(s, n) for s in inv.get("server", []) for n in instances(s)]
    switches = [(s, n) for s in inv.get("switch", []) for n in instances(s)]
    models = {s.get("model", "server") for s, _ in servers} | {s["model"] for s, _ in switches}
    makers = {m: (m.split()[0] if " " in m else m) for m in models}
    api.ensure("/api/dcim/manufacturers/", [{"name": v} for v in set(makers.values())], lambda o: o["name"])
    api.ensure(
        "/api/dcim/device-types/",
        [{"model": m, "manufacturer": {"name": makers[m]}, "u_height": 1} for m in sorted(models)],
        lambda o: o["model"],
    )

    devices = []
    for s, n in servers:
        d = {
            "name": expand(s["name"], n),
            "device_type": {"model": s.get("model", "server")},
            "role": {"name": "gpu-server"},
            "location": loc,
            "status": active,
            "custom_fields": {"topo_sockets": ",".join(s["sockets"])},
        }
        if "rack" in s:
            d["rack"] = {"name": expand(s["rack"], n, s.get("start", 1))}
        devices.append(d)
    for s, n in switches:
        cf = {}
        if "virtual" in s:
            cf["topo_virtual"] = s["virtual"]
        if "reserved_ports" in s:
            cf["topo_reserved_ports"] = str(s["reserved_ports"])
        if "role" in s:
            cf["topo_tier"] = s["role"]
        if "breakout" in s:
            # The cages stay the switch's interfaces (its device type's
            # ports); how they split is this field (docs/source-of-truth.md,
            # "Breakouts").
            cf["topo_breakout"] = s["breakout"]
        d = {
            "name": expand(s["name"], n),
            "device_type": {"model": s["model"]},
            "role": {"name": "fabric-switch"},
            "location": loc,
            "status": active,
            "custom_fields": cf,
        }
        if "rack" in s:
            d["rack"] = {"name": expand(s["rack"], n, s.get("start", 1))}
        devices.append(d)
    dev = api.ensure("/api/dcim/devices/", devices, lambda o: o["name"], f"location={site}")

    # Interfaces: every switch port, every NIC port (named after the NIC).
    interfaces = []
    for s, n in switches:
        pattern = s.get("port_name", "{p}")
        for p in range(1, s["ports"] + 1):
            interfaces.append({
                "device": dev[expand(s["name"], n)]["id"],
                "name": pattern.replace("{p}", str(p)),
                "type": gbps_type(s["port_gbps"]),
                "speed": s["port_gbps"] * 1_000_000,
                "status": active,
            })
    for s, n in servers:
        for nic in s.get("nic", []):
            interfaces.append({
                "device": dev[expand(s["name"], n)]["id"],
                "name": nic["name"],
                "type": gbps_type(nic["speed_gbps"]),
                "speed": nic["speed_gbps"] * 1_000_000,
                "status": active,
                **({"mac_address": expand(nic["mac"], n)} if "mac" in nic else {}),
            })
    ifaces = api.ensure(
        "/api/dcim/interfaces/",
        interfaces,
        lambda o: (o["device"]["id"] if isinstance(o["device"], dict) else o["device"], o["name"]),
        f"location={site}",
    )

    # Inventory items: PCIe switches on top, their GPUs and NICs below.
    top, children = [], []
    for s, n in servers:
        did = dev[expand(s["name"], n)]["id"]
        for p in s.get("pcie_switch", []):
            cf = {"topo_kind": "pcie-switch", "topo_socket": p["socket"]}
            for k in ("root_port", "lanes", "pcie_gen", "slots"):
                if k in p:
                    cf["topo_" + k] = p[k]
            top.append({"device": did, "name": p["name"], "part_id": p.get("model", ""), "custom_fields": cf})
        for kind in ("gpu", "nic"):
            for i, g in enumerate(s.get(kind, [])):
                cf = {"topo_kind": kind}
                for k in ("slot", "lanes", "memory_gb", "speed_gbps", "ports", "netdev"):
                    if k in g:
                        cf["topo_" + k] = g[k]
                item = {
                    "device": did,
                    "name": g.get("name", f"{kind}{i}"),
                    "part_id": g["model"],
                    "custom_fields": cf,
                    "_parent": g.get("pcie_switch"),
                }
                if "socket" in g:
                    cf["topo_socket"] = g["socket"]
                children.append(item)
    key = lambda o: (o["device"]["id"] if isinstance(o["device"], dict) else o["device"], o["name"])
    have = api.ensure("/api/dcim/inventory-items/", top, key, f"location={site}")
    for c in children:
        parent = c.pop("_parent")
        if parent:
            c["parent"] = have[(c["device"], parent)]["id"]
    api.ensure("/api/dcim/inventory-items/", children, key, f"location={site}")

    # NIC addresses: the /24 (or whatever the pattern says) as a prefix,
    # the address, and its assignment to the NIC's interface.
    addrs = []
    for s, n in servers:
        for nic in s.get("nic", []):
            if "ip" in nic:
                addrs.append((expand(s["name"], n), nic["name"], expand(nic["ip"], n)))
    for row in inv.get("nic_address", []):
        if "ip" in row:
            addrs.append((row["server"], row["nic"], row["ip"]))
    if addrs:
        prefixes = sorted({str(ipaddress.ip_interface(ip).network) for _, _, ip in addrs})
        api.ensure(
            "/api/ipam/prefixes/",
            [{"prefix": p, "status": active, "namespace": {"name": "Global"}} for p in prefixes],
            lambda o: o["prefix"],
        )
        ips = api.ensure(
            "/api/ipam/ip-addresses/",
            [{"address": ip, "status": active, "namespace": {"name": "Global"}} for _, _, ip in addrs],
            lambda o: o["address"],
        )
        api.ensure(
            "/api/ipam/ip-address-to-interface/",
            [
                {"ip_address": ips[ip]["id"], "interface": ifaces[(dev[srv]["id"], nic)]["id"]}
                for srv, nic, ip in addrs
            ],
            lambda o: (o["ip_address"]["id"] if isinstance(o["ip_address"], dict) else o["ip_address"],
                       o["interface"]["id"] if isinstance(o["interface"], dict) else o["interface"]),
        )

    if a.cables:
        port_name = {}
        for s, n in switches:
            port_name[expand(s["name"], n)] = s.get("port_name", "{p}")

        def iface(device, port):
            name = port_name[device].replace("{p}", port) if device in port_name and port.isdigit() else port
            return ifaces[(dev[device]["id"], name)]["id"]

        with open(a.cables, newline="") as f:
            rows = [r for r in csv.DictReader(f)]
        cables = []
        for r in rows:
            cables.append({
                "termination_a_type": "dcim.interface",
                "termination_a_id": iface(r["switch"], r["port"]),
                "termination_b_type": "dcim.interface",
                "termination_b_id": iface(r["peer"], r["peer_port"]),
                "status": {"name": "Connected"},
            })
        have = {
            (c["termination_a_id"], c["termination_b_id"])
            for c in api.all("/api/dcim/cables/")
        }
        new = [c for c in cables if (c["termination_a_id"], c["termination_b_id"]) not in have]
        for i in range(0, len(new), 500):
            api.call("POST", "/api/dcim/cables/", new[i : i + 500])
    print(f"load_nautobot: {len(servers)} servers, {len(switches)} switches at {site}", file=sys.stderr)


if __name__ == "__main__":
    main()
