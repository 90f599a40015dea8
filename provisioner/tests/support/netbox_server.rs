//! A NetBox 4.6 REST API in memory, written from NetBox's documentation
//! and source (github:netbox-community/netbox, tag v4.6.8) before and apart
//! from our client (provisioner/src/sot/), for the points where NetBox
//! differs from Nautobot. NetBox is not on PyPI and cannot be run here
//! (docs/source-of-truth.md, "NetBox"). Each behaviour names its source;
//! paths are in that repository at v4.6.8:
//!
//! - Authentication (`netbox/netbox/api/authentication.py`,
//!   `TokenAuthentication`): `Token <plaintext>` is a v1 token, `Bearer
//!   nbt_<key>.<plaintext>` a v2 token (the version is taken from the
//!   `nbt_` prefix, not from the keyword); an unknown one fails with
//!   `Invalid v1 token` / `Invalid v2 token`, and a `Bearer` value with the
//!   prefix but no `.` with "Could not parse key from v2 token". The class
//!   defines no `authenticate_header`, so Django REST framework answers 403,
//!   not 401 (`rest_framework/views.py`, `permission_denied` /
//!   `get_authenticate_header`). Without a header, `LOGIN_REQUIRED` (true
//!   by default since 4.0, `netbox/netbox/config/parameters.py`) gives 403
//!   "Authentication credentials were not provided."
//! - Pagination (`netbox/netbox/api/pagination.py`, `NetBoxPagination`, a
//!   `LimitOffsetPagination`): `count`, `next`, `previous`, `results`;
//!   `limit` (default `PAGINATE_COUNT` 50, at most `MAX_PAGE_SIZE` 1000)
//!   and `offset`; `next` is an absolute URL.
//! - Filtering (`netbox/netbox/settings.py` `DEFAULT_FILTER_BACKENDS`:
//!   django-filter's `DjangoFilterBackend`; `netbox/dcim/filtersets.py`,
//!   `netbox/ipam/filtersets.py`): query parameters that are no filter of
//!   the filter set are ignored; several values of one filter are ORed
//!   (docs/reference/filtering.md); a `ModelMultipleChoiceFilter` (devices'
//!   `site` and `role` by slug, components' `device` by name and `site` by
//!   slug) refuses an unknown value with 400 "Select a valid choice. X is
//!   not one of the available choices.", while a `MultiValueCharFilter`
//!   (cables' `site`, IP addresses' `device`) just matches nothing.
//!   Every filter set lists `id` in its `Meta.fields`, and `BaseFilterSet`
//!   (`netbox/netbox/filtersets.py`) makes it a `MultiValueNumberFilter`
//!   (`FILTER_DEFAULTS`): `?id=3&id=7` lists objects 3 and 7 (the kinds a
//!   push reads back have it here). `brief` gives each object's
//!   `brief_fields` (`BaseViewSet.initialize_request`,
//!   `netbox/netbox/api/viewsets/__init__.py`).
//! - Request line: NetBox runs behind gunicorn
//!   (docs/installation/4a-gunicorn.md), and `contrib/gunicorn.py` leaves
//!   `limit_request_line` at gunicorn's default of 4,094 bytes; a longer
//!   request line is answered 400 "Request Line is too large (N > 4094)"
//!   (gunicorn's settings reference).
//! - Writes (docs/integrations/rest-api.md, "Related Objects", "Creating
//!   Multiple Objects", "Updating Multiple Objects", "Deleting Multiple
//!   Objects"; `netbox/utilities/api.py` `get_related_object_by_attrs`):
//!   related objects by numeric id or by a dictionary of attributes; bulk
//!   create, update and delete are lists and all-or-none; fields that are
//!   not writable (an interface's `mac_address` since 4.2) or unknown are
//!   ignored without a word, as Django REST framework ignores them.
//! - Choices (`netbox/netbox/api/fields.py` `ChoiceField`): read as
//!   `{"value", "label"}`, written as the bare value: a dictionary is
//!   refused ("Value must be passed directly ..."), and values are lower
//!   case (`netbox/dcim/choices.py`, `netbox/ipam/choices.py`): `Active`
//!   is "not a valid choice".
//! - Custom fields (`netbox/extras/api/customfields.py`): read with every
//!   field defined for the object type (null when unset); an unknown name
//!   is refused, a value of the wrong type too
//!   (`netbox/extras/models/customfields.py`, `CustomField.validate`).
//! - Brief nested objects: the `brief_fields` of each serializer
//!   (`netbox/dcim/api/serializers_/*.py`, `netbox/ipam/api/serializers_/ip.py`,
//!   `vlans.py`, `netbox/extras/api/serializers_/tags.py`).
//! - Cables (`netbox/dcim/api/serializers_/cables.py`,
//!   `netbox/dcim/models/cables.py`): `a_terminations`/`b_terminations`
//!   lists of `{object_type, object_id}`; "Must define A and B terminations
//!   when creating a new cable."; "Duplicate termination found for
//!   dcim.interface N: cable M"; status `connected` (default), `planned`,
//!   `decommissioning`. An interface shows its `cable` (brief) and
//!   `cable_end`. A cable's `profile` (4.5+, `CableProfileChoices` in
//!   `netbox/dcim/choices.py`, blank by default) limits each end to its
//!   profile's connectors ("A side of cable has N terminations but only M
//!   are permitted for profile X", `BaseCableProfile.clean` in
//!   `netbox/dcim/cable_profiles.py`); the terminations keep their order,
//!   which is their connector order (`Cable.update_terminations`).
//! - MAC addresses, objects of their own since 4.2
//!   (`netbox/dcim/api/serializers_/devices.py` `MACAddressSerializer`,
//!   docs/release-notes/version-4.2.md): assigned to an interface through
//!   `assigned_object_type`/`assigned_object_id`; an interface's
//!   `primary_mac_address` must be one assigned to it
//!   (`netbox/dcim/models/device_components.py`, `Interface.clean`), and
//!   its read-only `mac_address` is that MAC's address, upper case with
//!   colons (`netbox/dcim/fields.py`, `mac_unix_expanded_uppercase`).
//! - IP addresses (`netbox/ipam/api/serializers_/ip.py`): assigned through
//!   `assigned_object_type`/`assigned_object_id`, shown as
//!   `assigned_object`; no namespace, no separate assignment object.
//! - Interfaces (`netbox/dcim/models/device_components.py`): an untagged
//!   VLAN needs a mode ("Interface mode does not support an untagged
//!   vlan.") and must be global or of the device's site.
//! - Devices: "Device name must be unique per site."
//!   (`netbox/dcim/models/devices.py`); tags need a `slug` (the model's
//!   `SlugField`, django-taggit's `TagBase`).
//!
//! - ETag/If-Match (4.6, docs/integrations/rest-api.md "Concurrent Update
//!   Protection"; `ETagMixin` in `netbox/netbox/api/viewsets/__init__.py`):
//!   a weak ETag from `last_updated` on single-object answers; `If-Match`
//!   checked on single-object PATCH, PUT and DELETE (412 "Precondition
//!   failed." with the current ETag), not on bulk requests, and `*`
//!   matches anything.
//!
//! Not modelled: permissions, change logging, ordering other than by id,
//! GraphQL.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Response, StatusCode};

use crate::http_server::Received;
use serde_json::{Map, Value, json};

/// One stored object: its own fields, related objects as ids.
pub type Obj = Map<String, Value>;

#[derive(Clone, Copy)]
enum F {
    Str,
    Int,
    /// A `DecimalField` (`max_digits=4, decimal_places=1`): NetBox sets
    /// `COERCE_DECIMAL_TO_STRING` false (`netbox/netbox/settings.py`), so
    /// it reads as a JSON number (`1.0`).
    Dec,
    Bool,
    /// A `ChoiceField`; the empty string allowed when `blank`.
    Choice(&'static [&'static str], bool),
    /// A nested related object (id or attributes on write, brief on read).
    Fk(&'static str),
    /// A `PrimaryKeyRelatedField`: the id only, both ways.
    Pk(&'static str),
    /// Many related objects (tags, tagged VLANs).
    M2m(&'static str),
    /// `assigned_object_type` + `assigned_object_id`, with the allowed types.
    Gfk(&'static [&'static str]),
    /// A cable's `a_terminations` / `b_terminations`.
    Terms,
    /// `custom_fields`.
    Cf,
    /// A MAC address.
    Mac,
    /// A list of content types (`object_types`).
    Types,
}

struct Field {
    name: &'static str,
    f: F,
    required: bool,
    default: Option<fn() -> Value>,
}

const fn fld(name: &'static str, f: F, required: bool) -> Field {
    Field {
        name,
        f,
        required,
        default: None,
    }
}

const fn dflt(name: &'static str, f: F, default: fn() -> Value) -> Field {
    Field {
        name,
        f,
        required: false,
        default: Some(default),
    }
}

/// The values a filter finds on an object, and for a validated
/// (`ModelMultipleChoiceFilter`) one the kind and attribute a given value
/// must name.
type FilterFn = fn(&Db, &Obj) -> Vec<String>;

struct Filter {
    param: &'static str,
    on: FilterFn,
    validated: Option<(&'static str, &'static str)>,
}

const fn flt(param: &'static str, on: FilterFn) -> Filter {
    Filter {
        param,
        on,
        validated: None,
    }
}

const fn vflt(param: &'static str, on: FilterFn, kind: &'static str, attr: &'static str) -> Filter {
    Filter {
        param,
        on,
        validated: Some((kind, attr)),
    }
}

struct Spec {
    kind: &'static str,
    ctype: &'static str,
    fields: &'static [Field],
    brief: &'static [&'static str],
    display: &'static str,
    filters: &'static [Filter],
}

// Choices, `netbox/dcim/choices.py` and `netbox/ipam/choices.py` (v4.6.8).
const SITE_STATUS: &[&str] = &["planned", "staging", "active", "decommissioning", "retired"];
const DEVICE_STATUS: &[&str] = &[
    "offline",
    "active",
    "planned",
    "staged",
    "failed",
    "inventory",
    "decommissioning",
];
const LINK_STATUS: &[&str] = &["connected", "planned", "decommissioning"];
/// `RackStatusChoices` and `DeviceFaceChoices` (`netbox/dcim/choices.py`).
const RACK_STATUS: &[&str] = &["reserved", "available", "planned", "active", "deprecated"];
const FACES: &[&str] = &["front", "rear"];
/// `CableProfileChoices` (new in 4.5), with each profile's connectors on
/// A and B (`a_connectors`/`b_connectors` of its class in
/// `netbox/dcim/cable_profiles.py`) and its display label.
const CABLE_PROFILES: &[&str] = &[
    "single-1c1p",
    "single-1c2p",
    "single-1c4p",
    "single-1c6p",
    "single-1c8p",
    "single-1c12p",
    "single-1c16p",
    "trunk-2c1p",
    "trunk-2c2p",
    "trunk-2c4p",
    "trunk-2c4p-shuffle",
    "trunk-2c6p",
    "trunk-2c8p",
    "trunk-2c12p",
    "trunk-4c1p",
    "trunk-4c2p",
    "trunk-4c4p",
    "trunk-4c4p-shuffle",
    "trunk-4c6p",
    "trunk-4c8p",
    "trunk-8c4p",
    "breakout-1c2p-2c1p",
    "breakout-1c4p-4c1p",
    "breakout-1c6p-6c1p",
    "breakout-1c8p-8c1p",
    "breakout-2c4p-8c1p-shuffle",
];

/// A profile's (A connectors, B connectors, display): `single-1c<N>p`
/// one each ("1C<N>P"), `trunk-<C>c<N>p` C each ("<C>C<N>P trunk"),
/// `breakout-1c<N>p-<N>c1p` 1 and N ("1C<N>P:<N>C1P breakout"),
/// `breakout-2c4p-8c1p-shuffle` 2 and 8.
fn profile_connectors(p: &str) -> (usize, usize, String) {
    let upper = p.to_ascii_uppercase();
    let parts: Vec<&str> = upper.split('-').collect();
    let count = |x: &str| {
        x.split('C')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1)
    };
    match parts.as_slice() {
        ["SINGLE", x] => (1, 1, x.to_string()),
        ["TRUNK", x, rest @ ..] => (
            count(x),
            count(x),
            format!(
                "{x} trunk{}",
                if rest.is_empty() { "" } else { " (shuffle)" }
            ),
        ),
        ["BREAKOUT", a, b, rest @ ..] => (
            count(a),
            count(b),
            format!(
                "{a}:{b} breakout{}",
                if rest.is_empty() { "" } else { " (shuffle)" }
            ),
        ),
        _ => (1, 1, p.to_string()),
    }
}
const VLAN_STATUS: &[&str] = &["active", "reserved", "deprecated"];
const PREFIX_STATUS: &[&str] = &["container", "active", "reserved", "deprecated"];
const IP_STATUS: &[&str] = &["active", "reserved", "deprecated", "dhcp", "slaac"];
const MODES: &[&str] = &["access", "tagged", "tagged-all", "q-in-q"];
/// The interface types this server knows (a subset of
/// `InterfaceTypeChoices`; `virtual`, `bridge` and `lag` cannot be cabled).
const IFACE_TYPES: &[&str] = &[
    "virtual",
    "bridge",
    "lag",
    "1000base-t",
    "10gbase-x-sfpp",
    "25gbase-x-sfp28",
    "40gbase-x-qsfpp",
    "50gbase-x-sfp28",
    "100gbase-x-qsfp28",
    "200gbase-x-qsfp56",
    "400gbase-x-qsfpdd",
    "800gbase-x-qsfpdd",
    "other",
];
const CF_TYPES: &[&str] = &[
    "text",
    "longtext",
    "integer",
    "decimal",
    "boolean",
    "date",
    "datetime",
    "url",
    "json",
    "select",
    "multiselect",
    "object",
    "multiobject",
];

fn active() -> Value {
    json!("active")
}
fn connected() -> Value {
    json!("connected")
}
fn yes() -> Value {
    json!(true)
}
fn no() -> Value {
    json!(false)
}
fn grey() -> Value {
    json!("9e9e9e")
}
fn empty() -> Value {
    json!("")
}

const TAGS: Field = dflt("tags", F::M2m("extras/tags"), || json!([]));
const CF: Field = dflt("custom_fields", F::Cf, || json!({}));
const DESCRIPTION: Field = dflt("description", F::Str, empty);

fn scalar(o: &Obj, k: &str) -> Vec<String> {
    match o.get(k) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Number(n)) => vec![n.to_string()],
        Some(Value::Bool(b)) => vec![if *b { "True" } else { "False" }.to_string()],
        _ => vec![],
    }
}
fn related(db: &Db, o: &Obj, k: &str, kind: &str, attr: &str) -> Vec<String> {
    o.get(k)
        .and_then(Value::as_u64)
        .and_then(|id| db.get(kind, id))
        .map(|r| scalar(r, attr))
        .unwrap_or_default()
}
/// The device of a device component.
fn device_of<'a>(db: &'a Db, o: &Obj) -> Option<&'a Obj> {
    db.get("dcim/devices", o.get("device")?.as_u64()?)
}
/// The interface an IP or MAC address is assigned to.
fn assigned_iface<'a>(db: &'a Db, o: &Obj) -> Option<&'a Obj> {
    if o.get("assigned_object_type")? != "dcim.interface" {
        return None;
    }
    db.get("dcim/interfaces", o.get("assigned_object_id")?.as_u64()?)
}

/// `DeviceComponentFilterSet` (`netbox/dcim/filtersets.py`): a
/// component's device by name and id, its device's site by slug; the names
/// and slugs are validated.
const COMPONENT_DEVICE: Filter = vflt(
    "device",
    |db, o| related(db, o, "device", "dcim/devices", "name"),
    "dcim/devices",
    "name",
);
const COMPONENT_DEVICE_ID: Filter = flt("device_id", |_, o| scalar(o, "device"));
const COMPONENT_SITE: Filter = vflt(
    "site",
    |db, o| {
        device_of(db, o)
            .map(|d| related(db, d, "site", "dcim/sites", "slug"))
            .unwrap_or_default()
    },
    "dcim/sites",
    "slug",
);

const SPECS: &[Spec] = &[
    Spec {
        kind: "dcim/sites",
        ctype: "dcim.site",
        fields: &[
            fld("name", F::Str, true),
            fld("slug", F::Str, true),
            dflt("status", F::Choice(SITE_STATUS, false), active),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &["id", "url", "display", "name", "slug", "description"],
        display: "name",
        filters: &[
            flt("id", |_, o| scalar(o, "id")),
            flt("name", |_, o| scalar(o, "name")),
            flt("slug", |_, o| scalar(o, "slug")),
        ],
    },
    Spec {
        kind: "dcim/manufacturers",
        ctype: "dcim.manufacturer",
        fields: &[
            fld("name", F::Str, true),
            fld("slug", F::Str, true),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &["id", "url", "display", "name", "slug", "description"],
        display: "name",
        filters: &[flt("name", |_, o| scalar(o, "name"))],
    },
    Spec {
        kind: "dcim/device-types",
        ctype: "dcim.devicetype",
        fields: &[
            fld("manufacturer", F::Fk("dcim/manufacturers"), true),
            fld("model", F::Str, true),
            fld("slug", F::Str, true),
            // `DeviceTypeSerializer.u_height`, a decimal, default 1.0.
            dflt("u_height", F::Dec, || json!(1.0)),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &[
            "id",
            "url",
            "display",
            "manufacturer",
            "model",
            "slug",
            "description",
        ],
        display: "model",
        filters: &[flt("model", |_, o| scalar(o, "model"))],
    },
    Spec {
        kind: "dcim/device-roles",
        ctype: "dcim.devicerole",
        fields: &[
            fld("name", F::Str, true),
            fld("slug", F::Str, true),
            dflt("color", F::Str, grey),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &["id", "url", "display", "name", "slug", "description"],
        display: "name",
        filters: &[flt("slug", |_, o| scalar(o, "slug"))],
    },
    Spec {
        kind: "dcim/racks",
        ctype: "dcim.rack",
        // `RackSerializer` (`netbox/dcim/api/serializers_/racks.py`) and
        // `RackBase.u_height` (1 to 100, default 42,
        // `netbox/dcim/models/racks.py`); `RackFilterSet` filters by
        // `name` and `site` slug (validated).
        fields: &[
            fld("name", F::Str, true),
            fld("site", F::Fk("dcim/sites"), true),
            dflt("status", F::Choice(RACK_STATUS, false), active),
            dflt("u_height", F::Int, || json!(42)),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &["id", "url", "display", "name", "description"],
        display: "name",
        filters: &[
            flt("id", |_, o| scalar(o, "id")),
            flt("name", |_, o| scalar(o, "name")),
            vflt(
                "site",
                |db, o| related(db, o, "site", "dcim/sites", "slug"),
                "dcim/sites",
                "slug",
            ),
        ],
    },
    Spec {
        kind: "dcim/devices",
        ctype: "dcim.device",
        fields: &[
            fld("name", F::Str, false),
            fld("device_type", F::Fk("dcim/device-types"), true),
            fld("role", F::Fk("dcim/device-roles"), true),
            fld("site", F::Fk("dcim/sites"), true),
            fld("rack", F::Fk("dcim/racks"), false),
            // `DeviceSerializer.position` (a decimal, at least 0.5) and
            // `face` (blank by default).
            fld("position", F::Dec, false),
            dflt("face", F::Choice(FACES, true), empty),
            dflt("status", F::Choice(DEVICE_STATUS, false), active),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &["id", "url", "display", "name", "description"],
        display: "name",
        filters: &[
            flt("id", |_, o| scalar(o, "id")),
            flt("name", |_, o| scalar(o, "name")),
            vflt(
                "site",
                |db, o| related(db, o, "site", "dcim/sites", "slug"),
                "dcim/sites",
                "slug",
            ),
            flt("site_id", |_, o| scalar(o, "site")),
            flt("rack_id", |_, o| scalar(o, "rack")),
            vflt(
                "role",
                |db, o| related(db, o, "role", "dcim/device-roles", "slug"),
                "dcim/device-roles",
                "slug",
            ),
            flt("role_id", |_, o| scalar(o, "role")),
        ],
    },
    Spec {
        kind: "dcim/interfaces",
        ctype: "dcim.interface",
        fields: &[
            fld("device", F::Fk("dcim/devices"), true),
            fld("name", F::Str, true),
            dflt("label", F::Str, empty),
            fld("type", F::Choice(IFACE_TYPES, false), true),
            dflt("enabled", F::Bool, yes),
            fld("speed", F::Int, false),
            dflt("mgmt_only", F::Bool, no),
            dflt("mode", F::Choice(MODES, true), empty),
            fld("untagged_vlan", F::Fk("ipam/vlans"), false),
            dflt("tagged_vlans", F::M2m("ipam/vlans"), || json!([])),
            fld("primary_mac_address", F::Fk("dcim/mac-addresses"), false),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &[
            "id",
            "url",
            "display",
            "device",
            "name",
            "description",
            "cable",
            "_occupied",
        ],
        display: "name",
        filters: &[
            flt("id", |_, o| scalar(o, "id")),
            flt("name", |_, o| scalar(o, "name")),
            COMPONENT_DEVICE,
            COMPONENT_DEVICE_ID,
            COMPONENT_SITE,
        ],
    },
    Spec {
        kind: "dcim/inventory-items",
        ctype: "dcim.inventoryitem",
        fields: &[
            fld("device", F::Fk("dcim/devices"), true),
            fld("parent", F::Pk("dcim/inventory-items"), false),
            fld("name", F::Str, true),
            dflt("part_id", F::Str, empty),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &["id", "url", "display", "device", "name", "description"],
        display: "name",
        filters: &[
            flt("name", |_, o| scalar(o, "name")),
            COMPONENT_DEVICE,
            COMPONENT_DEVICE_ID,
            COMPONENT_SITE,
        ],
    },
    Spec {
        kind: "dcim/mac-addresses",
        ctype: "dcim.macaddress",
        fields: &[
            fld("mac_address", F::Mac, true),
            fld(
                "assigned_object",
                F::Gfk(&["dcim.interface", "virtualization.vminterface"]),
                false,
            ),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &["id", "url", "display", "mac_address", "description"],
        display: "mac_address",
        filters: &[
            flt("id", |_, o| scalar(o, "id")),
            // MultiValueMACAddressFilter: compared as MACs (any case).
            flt("mac_address", |_, o| scalar(o, "mac_address")),
            flt("interface_id", |db, o| {
                assigned_iface(db, o)
                    .map(|i| scalar(i, "id"))
                    .unwrap_or_default()
            }),
            flt("device_id", |db, o| {
                assigned_iface(db, o)
                    .map(|i| scalar(i, "device"))
                    .unwrap_or_default()
            }),
        ],
    },
    Spec {
        kind: "dcim/cables",
        ctype: "dcim.cable",
        fields: &[
            fld("a_terminations", F::Terms, false),
            fld("b_terminations", F::Terms, false),
            dflt("status", F::Choice(LINK_STATUS, false), connected),
            dflt("profile", F::Choice(CABLE_PROFILES, true), empty),
            dflt("label", F::Str, empty),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &["id", "url", "display", "label", "description"],
        display: "label",
        filters: &[
            flt("id", |_, o| scalar(o, "id")),
            flt("label", |_, o| scalar(o, "label")),
            flt("status", |_, o| scalar(o, "status")),
            // CableFilterSet.site: a MultiValueCharFilter on the
            // terminations' site slug (not validated).
            flt("site", |db, o| {
                let mut out = Vec::new();
                for side in ["a_terminations", "b_terminations"] {
                    for t in o.get(side).and_then(Value::as_array).into_iter().flatten() {
                        if let Some(i) = t["object_id"]
                            .as_u64()
                            .and_then(|id| db.get("dcim/interfaces", id))
                            && let Some(d) = device_of(db, i)
                        {
                            out.extend(related(db, d, "site", "dcim/sites", "slug"));
                        }
                    }
                }
                out
            }),
        ],
    },
    Spec {
        kind: "extras/tags",
        ctype: "extras.tag",
        fields: &[
            fld("name", F::Str, true),
            fld("slug", F::Str, true),
            dflt("color", F::Str, grey),
            DESCRIPTION,
            dflt("object_types", F::Types, || json!([])),
        ],
        brief: &[
            "id",
            "url",
            "display",
            "name",
            "slug",
            "color",
            "description",
        ],
        display: "name",
        filters: &[
            flt("id", |_, o| scalar(o, "id")),
            flt("name", |_, o| scalar(o, "name")),
            flt("slug", |_, o| scalar(o, "slug")),
        ],
    },
    Spec {
        kind: "extras/custom-fields",
        ctype: "extras.customfield",
        fields: &[
            fld("name", F::Str, true),
            fld("type", F::Choice(CF_TYPES, false), true),
            fld("object_types", F::Types, true),
            DESCRIPTION,
        ],
        brief: &["id", "url", "display", "name", "description"],
        display: "name",
        filters: &[flt("name", |_, o| scalar(o, "name"))],
    },
    Spec {
        kind: "ipam/vlans",
        ctype: "ipam.vlan",
        fields: &[
            fld("site", F::Fk("dcim/sites"), false),
            fld("vid", F::Int, true),
            fld("name", F::Str, true),
            dflt("status", F::Choice(VLAN_STATUS, false), active),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &["id", "url", "display", "vid", "name", "description"],
        display: "name",
        filters: &[
            flt("id", |_, o| scalar(o, "id")),
            flt("name", |_, o| scalar(o, "name")),
            flt("vid", |_, o| scalar(o, "vid")),
        ],
    },
    Spec {
        kind: "ipam/prefixes",
        ctype: "ipam.prefix",
        fields: &[
            fld("prefix", F::Str, true),
            dflt("status", F::Choice(PREFIX_STATUS, false), active),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &["id", "url", "display", "family", "prefix", "description"],
        display: "prefix",
        filters: &[
            flt("id", |_, o| scalar(o, "id")),
            flt("prefix", |_, o| scalar(o, "prefix")),
        ],
    },
    Spec {
        kind: "ipam/ip-addresses",
        ctype: "ipam.ipaddress",
        fields: &[
            fld("address", F::Str, true),
            dflt("status", F::Choice(IP_STATUS, false), active),
            fld(
                "assigned_object",
                F::Gfk(&[
                    "dcim.interface",
                    "virtualization.vminterface",
                    "ipam.fhrpgroup",
                ]),
                false,
            ),
            dflt("dns_name", F::Str, empty),
            DESCRIPTION,
            TAGS,
            CF,
        ],
        brief: &["id", "url", "display", "family", "address", "description"],
        display: "address",
        filters: &[
            flt("id", |_, o| scalar(o, "id")),
            flt("address", |_, o| scalar(o, "address")),
            flt("device_id", |db, o| {
                assigned_iface(db, o)
                    .map(|i| scalar(i, "device"))
                    .unwrap_or_default()
            }),
            flt("interface_id", |db, o| {
                assigned_iface(db, o)
                    .map(|i| scalar(i, "id"))
                    .unwrap_or_default()
            }),
        ],
    },
];

fn spec(kind: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.kind == kind)
}

/// The objects, by kind (`dcim/devices`) and id.
#[derive(Default, Clone)]
pub struct Db {
    objects: BTreeMap<&'static str, BTreeMap<u64, Obj>>,
    next_id: u64,
}

impl Db {
    fn get(&self, kind: &str, id: u64) -> Option<&Obj> {
        self.objects.get(kind)?.get(&id)
    }
    fn all(&self, kind: &str) -> impl Iterator<Item = &Obj> {
        self.objects.get(kind).into_iter().flat_map(|m| m.values())
    }
}

/// What a request did, for tests that count writes.
#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub status: u16,
    /// The request's `If-Match`, when it had one.
    pub if_match: Option<String>,
}

/// The weak ETag of an object (`ETagMixin._get_etag`,
/// `netbox/netbox/api/viewsets/__init__.py`, v4.6.8): `W/"<last_updated,
/// else created>"` in Python's `isoformat()`, which writes UTC as
/// `+00:00` where the JSON (Django REST framework's `DateTimeField`) writes
/// `Z`. Served on single-object GET, POST, PATCH and PUT answers.
fn etag(o: &Obj) -> Option<String> {
    let ts = o
        .get("last_updated")
        .or_else(|| o.get("created"))
        .and_then(Value::as_str)?;
    let iso = match ts.strip_suffix('Z') {
        Some(t) => format!("{t}+00:00"),
        None => ts.to_string(),
    };
    Some(format!("W/\"{iso}\""))
}

/// The server's state: objects, tokens, the request log.
pub struct NetBox {
    pub db: Db,
    /// v1 tokens (plaintext).
    pub v1: Vec<String>,
    /// v2 tokens (key, plaintext).
    pub v2: Vec<(String, String)>,
    pub log: Vec<Logged>,
    /// `http://127.0.0.1:<port>` once bound.
    pub base: String,
    /// The request's `If-Match` header (set by [`serve`] per request).
    pub if_match: Option<String>,
    /// The `ETag` header of the answer (set by the request's handling).
    pub etag_out: Option<String>,
    /// A concurrent edit for the tests: after the first single-object GET
    /// of this kind (`dcim/interfaces`), that object is saved again by
    /// "someone else" (its `last_updated` moves on), after the answer.
    pub edit_after_get: Option<String>,
    /// A hostile server, for the fuzz target of issue #31 (like the push
    /// servers' `Mutator`): called with each request's method, path with
    /// query, status and honest answer; `Some((status, bytes))` is sent
    /// instead. Not NetBox's behaviour: NetBox is only ever honest here.
    pub spoil: Option<Arc<Spoil>>,
}

/// See [`NetBox::spoil`].
pub type Spoil = dyn Fn(&str, &str, u16, &Value) -> Option<(u16, Vec<u8>)> + Send + Sync;

type Errors = Value;

fn err(field: &str, msg: impl Into<String>) -> Errors {
    json!({ field: [msg.into()] })
}

/// Python's `repr` of a dict of attributes, as NetBox's messages print it.
fn py_repr(attrs: &Map<String, Value>) -> String {
    let inner: Vec<String> = attrs
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("'{k}': '{s}'"),
            other => format!("'{k}': {other}"),
        })
        .collect();
    format!("{{{}}}", inner.join(", "))
}

fn title(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A MAC address as NetBox stores and shows it (EUI-48, upper case, colons).
fn mac_norm(s: &str) -> Option<String> {
    let hex: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    let seps = s
        .chars()
        .filter(|c| !c.is_ascii_hexdigit())
        .all(|c| ":-.".contains(c));
    if hex.len() != 12 || !seps {
        return None;
    }
    let up = hex.to_ascii_uppercase();
    Some(
        (0..6)
            .map(|i| &up[2 * i..2 * i + 2])
            .collect::<Vec<_>>()
            .join(":"),
    )
}

impl NetBox {
    pub fn new() -> NetBox {
        NetBox {
            db: Db {
                next_id: 1,
                ..Db::default()
            },
            v1: Vec::new(),
            v2: Vec::new(),
            log: Vec::new(),
            base: String::new(),
            if_match: None,
            etag_out: None,
            edit_after_get: None,
            spoil: None,
        }
    }

    /// The writes (POST, PATCH, PUT, DELETE) logged since index `from`,
    /// as `METHOD path -> status`.
    pub fn writes_since(&self, from: usize) -> Vec<String> {
        self.log[from..]
            .iter()
            .filter(|l| l.method != "GET")
            .map(|l| format!("{} {} -> {}", l.method, l.path, l.status))
            .collect()
    }

    /// Objects of a kind (the stored form), for tests.
    pub fn objects(&self, kind: &str) -> Vec<Obj> {
        self.db.all(kind).cloned().collect()
    }

    fn url(&self, kind: &str, id: u64) -> String {
        format!("{}/api/{kind}/{id}/", self.base)
    }

    /// The brief (nested) form of an object.
    fn brief(&self, kind: &str, id: u64) -> Value {
        let Some(s) = spec(kind) else {
            return Value::Null;
        };
        match self.db.get(kind, id) {
            Some(o) => self.render(s, o, Some(s.brief)),
            None => Value::Null,
        }
    }

    /// An interface's cable and the end it is on.
    fn cable_of(&self, iface: u64) -> Option<(u64, &'static str)> {
        for c in self.db.all("dcim/cables") {
            for (side, end) in [("a_terminations", "A"), ("b_terminations", "B")] {
                let hit = c
                    .get(side)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .any(|t| t["object_type"] == "dcim.interface" && t["object_id"] == iface);
                if hit {
                    return c["id"].as_u64().map(|id| (id, end));
                }
            }
        }
        None
    }

    fn kind_of_ctype(ctype: &str) -> Option<&'static str> {
        SPECS.iter().find(|s| s.ctype == ctype).map(|s| s.kind)
    }

    fn render(&self, s: &Spec, o: &Obj, only: Option<&[&str]>) -> Value {
        let id = o["id"].as_u64().unwrap_or(0);
        let want = |k: &str| only.is_none_or(|f| f.contains(&k));
        let mut out = Map::new();
        out.insert("id".into(), json!(id));
        if want("url") {
            out.insert("url".into(), json!(self.url(s.kind, id)));
        }
        if want("display") {
            let d = match o.get(s.display) {
                Some(Value::String(x)) if !x.is_empty() => x.clone(),
                _ => format!("#{id}"),
            };
            out.insert("display".into(), json!(d));
        }
        for f in s.fields {
            if !want(f.name) && !matches!(f.f, F::Gfk(_)) {
                continue;
            }
            let v = o.get(f.name).cloned().unwrap_or(Value::Null);
            match f.f {
                F::Fk(kind) => {
                    let b = v.as_u64().map_or(Value::Null, |r| self.brief(kind, r));
                    out.insert(f.name.into(), b);
                }
                F::M2m(kind) => {
                    let items: Vec<Value> = v
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_u64)
                        .map(|r| self.brief(kind, r))
                        .collect();
                    out.insert(f.name.into(), Value::Array(items));
                }
                F::Choice(choices, _) => {
                    let c = match v.as_str() {
                        Some("") | None => Value::Null,
                        Some(x) => {
                            json!({"value": x, "label": if choices.contains(&x) { title(x) } else { String::new() }})
                        }
                    };
                    out.insert(f.name.into(), c);
                }
                F::Gfk(_) => {
                    if only.is_some() {
                        continue;
                    }
                    let ty = o
                        .get("assigned_object_type")
                        .cloned()
                        .unwrap_or(Value::Null);
                    let oid = o.get("assigned_object_id").cloned().unwrap_or(Value::Null);
                    let obj = match (ty.as_str().and_then(Self::kind_of_ctype), oid.as_u64()) {
                        (Some(k), Some(i)) => self.brief(k, i),
                        _ => Value::Null,
                    };
                    out.insert("assigned_object_type".into(), ty);
                    out.insert("assigned_object_id".into(), oid);
                    out.insert("assigned_object".into(), obj);
                }
                F::Terms => {
                    let items: Vec<Value> = v
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|t| {
                            let obj = match (
                                t["object_type"].as_str().and_then(Self::kind_of_ctype),
                                t["object_id"].as_u64(),
                            ) {
                                (Some(k), Some(i)) => self.brief(k, i),
                                _ => Value::Null,
                            };
                            json!({"object_type": t["object_type"], "object_id": t["object_id"], "object": obj})
                        })
                        .collect();
                    out.insert(f.name.into(), Value::Array(items));
                }
                F::Cf => {
                    let mut cf = Map::new();
                    for def in self.db.all("extras/custom-fields") {
                        let applies = def["object_types"]
                            .as_array()
                            .is_some_and(|t| t.iter().any(|x| x == s.ctype));
                        if let (true, Some(name)) = (applies, def["name"].as_str()) {
                            cf.insert(name.into(), v.get(name).cloned().unwrap_or(Value::Null));
                        }
                    }
                    out.insert(f.name.into(), Value::Object(cf));
                }
                _ => {
                    out.insert(f.name.into(), v);
                }
            }
        }
        // Computed fields.
        if s.kind == "dcim/interfaces" {
            let cable = self.cable_of(id);
            if want("cable") {
                out.insert(
                    "cable".into(),
                    cable.map_or(Value::Null, |(c, _)| self.brief("dcim/cables", c)),
                );
            }
            if want("_occupied") {
                out.insert("_occupied".into(), json!(cable.is_some()));
            }
            if only.is_none() {
                out.insert(
                    "cable_end".into(),
                    cable.map_or(Value::Null, |(_, e)| json!(e)),
                );
                let primary = o
                    .get("primary_mac_address")
                    .and_then(Value::as_u64)
                    .and_then(|m| self.db.get("dcim/mac-addresses", m));
                out.insert(
                    "mac_address".into(),
                    primary.map_or(Value::Null, |m| m["mac_address"].clone()),
                );
                let macs: Vec<Value> = self
                    .db
                    .all("dcim/mac-addresses")
                    .filter(|m| {
                        m["assigned_object_type"] == "dcim.interface"
                            && m["assigned_object_id"] == id
                    })
                    .filter_map(|m| m["id"].as_u64())
                    .map(|m| self.brief("dcim/mac-addresses", m))
                    .collect();
                out.insert("mac_addresses".into(), Value::Array(macs));
            }
        }
        if only.is_none() {
            for k in ["created", "last_updated"] {
                out.insert(k.into(), o.get(k).cloned().unwrap_or(Value::Null));
            }
        }
        Value::Object(out)
    }

    /// A related object by id or attributes (`get_related_object_by_attrs`).
    fn lookup(&self, kind: &str, v: &Value) -> Result<u64, String> {
        match v {
            Value::Object(attrs) => {
                let hits: Vec<u64> = self
                    .db
                    .all(kind)
                    .filter(|o| attrs.iter().all(|(k, want)| o.get(k) == Some(want)))
                    .filter_map(|o| o["id"].as_u64())
                    .collect();
                match hits.as_slice() {
                    [one] => Ok(*one),
                    [] => Err(format!(
                        "Related object not found using the provided attributes: {}",
                        py_repr(attrs)
                    )),
                    _ => Err(format!(
                        "Multiple objects match the provided attributes: {}",
                        py_repr(attrs)
                    )),
                }
            }
            other => {
                let pk = other
                    .as_u64()
                    .or_else(|| other.as_str().and_then(|s| s.trim().parse().ok()));
                let Some(pk) = pk else {
                    return Err(format!(
                        "Related objects must be referenced by numeric ID or by dictionary of attributes. Received an unrecognized value: {other}"
                    ));
                };
                if self.db.get(kind, pk).is_some() {
                    Ok(pk)
                } else {
                    Err(format!(
                        "Related object not found using the provided numeric ID: {pk}"
                    ))
                }
            }
        }
    }

    /// Validates a create (`existing` None) or a partial update, returning
    /// the object to store.
    fn validate(&self, s: &Spec, input: &Value, existing: Option<&Obj>) -> Result<Obj, Errors> {
        let Some(input) = input.as_object() else {
            return Err(
                json!({"non_field_errors": ["Invalid data. Expected a dictionary, but got list."]}),
            );
        };
        let mut o = existing.cloned().unwrap_or_default();
        let mut errors = Map::new();
        let mut cf_errors = None;
        let mut fail = |k: &str, m: String| {
            errors.insert(k.to_string(), json!([m]));
        };
        for f in s.fields {
            let given = match f.f {
                F::Gfk(_) => {
                    input.contains_key("assigned_object_type")
                        || input.contains_key("assigned_object_id")
                }
                _ => input.contains_key(f.name),
            };
            if !given {
                if existing.is_none() {
                    if f.required {
                        fail(f.name, "This field is required.".into());
                    } else if let Some(d) = f.default {
                        o.insert(f.name.into(), d());
                    } else if !matches!(f.f, F::Gfk(_)) {
                        o.insert(f.name.into(), Value::Null);
                    }
                }
                continue;
            }
            let v = input.get(f.name).cloned().unwrap_or(Value::Null);
            match f.f {
                F::Str => match v {
                    Value::String(_) => {
                        o.insert(f.name.into(), v);
                    }
                    Value::Null if !f.required => {
                        o.insert(f.name.into(), json!(""));
                    }
                    _ => fail(f.name, "Not a valid string.".into()),
                },
                F::Int => {
                    let n = v.as_i64().or_else(|| v.as_str().and_then(|x| x.parse().ok()));
                    match (n, &v) {
                        (Some(n), _) => {
                            o.insert(f.name.into(), json!(n));
                        }
                        (None, Value::Null) if !f.required => {
                            o.insert(f.name.into(), Value::Null);
                        }
                        _ => fail(f.name, "A valid integer is required.".into()),
                    }
                }
                F::Dec => {
                    let n = v.as_f64().or_else(|| v.as_str().and_then(|x| x.parse().ok()));
                    match n {
                        Some(n) if (n * 10.0).fract() == 0.0 && n.abs() < 1000.0 => {
                            o.insert(f.name.into(), json!(n));
                        }
                        Some(_) => fail(
                            f.name,
                            "Ensure that there are no more than 4 digits in total.".into(),
                        ),
                        None if v.is_null() && !f.required => {
                            o.insert(f.name.into(), Value::Null);
                        }
                        None => fail(f.name, "A valid number is required.".into()),
                    }
                }
                F::Bool => match v {
                    Value::Bool(_) => {
                        o.insert(f.name.into(), v);
                    }
                    _ => fail(f.name, "Must be a valid boolean.".into()),
                },
                F::Choice(choices, blank) => match &v {
                    Value::Object(_) | Value::Array(_) => fail(
                        f.name,
                        "Value must be passed directly (e.g. \"foo\": 123); do not use a dictionary or list.".into(),
                    ),
                    Value::String(x) if x.is_empty() && blank => {
                        o.insert(f.name.into(), v.clone());
                    }
                    Value::String(x) if x.is_empty() => fail(f.name, "This field may not be blank.".into()),
                    Value::String(x) if choices.contains(&x.as_str()) => {
                        o.insert(f.name.into(), v.clone());
                    }
                    Value::Null if blank => {
                        o.insert(f.name.into(), json!(""));
                    }
                    other => {
                        let shown = other.as_str().map_or_else(|| other.to_string(), str::to_string);
                        fail(f.name, format!("{shown} is not a valid choice."));
                    }
                },
                F::Fk(kind) => {
                    if v.is_null() {
                        if f.required {
                            fail(f.name, "This field may not be null.".into());
                        } else {
                            o.insert(f.name.into(), Value::Null);
                        }
                    } else {
                        match self.lookup(kind, &v) {
                            Ok(id) => {
                                o.insert(f.name.into(), json!(id));
                            }
                            Err(m) => fail(f.name, m),
                        }
                    }
                }
                F::Pk(kind) => match v.as_u64() {
                    None if v.is_null() => {
                        o.insert(f.name.into(), Value::Null);
                    }
                    Some(id) if self.db.get(kind, id).is_some() => {
                        o.insert(f.name.into(), json!(id));
                    }
                    Some(id) => fail(
                        f.name,
                        format!("Invalid pk \"{id}\" - object does not exist."),
                    ),
                    None => fail(
                        f.name,
                        format!("Incorrect type. Expected pk value, received {}.", v),
                    ),
                },
                F::M2m(kind) => {
                    let Some(items) = v.as_array() else {
                        fail(f.name, "Expected a list of items.".into());
                        continue;
                    };
                    let mut ids = Vec::new();
                    for it in items {
                        match self.lookup(kind, it) {
                            Ok(id) => ids.push(json!(id)),
                            Err(m) => fail(f.name, m),
                        }
                    }
                    o.insert(f.name.into(), Value::Array(ids));
                }
                F::Gfk(allowed) => {
                    let ty = input.get("assigned_object_type").cloned().unwrap_or(Value::Null);
                    let id = input.get("assigned_object_id").cloned().unwrap_or(Value::Null);
                    match (&ty, &id) {
                        (Value::Null, Value::Null) => {
                            o.insert("assigned_object_type".into(), Value::Null);
                            o.insert("assigned_object_id".into(), Value::Null);
                        }
                        (Value::String(t), _) if !allowed.contains(&t.as_str()) => fail(
                            "assigned_object_type",
                            format!("Invalid content type: {t}"),
                        ),
                        (Value::String(t), idv) => {
                            let kind = Self::kind_of_ctype(t).unwrap_or("");
                            let pk = idv
                                .as_u64()
                                .or_else(|| idv.as_str().and_then(|x| x.parse().ok()));
                            match pk {
                                Some(pk) if self.db.get(kind, pk).is_some() => {
                                    o.insert("assigned_object_type".into(), ty.clone());
                                    o.insert("assigned_object_id".into(), json!(pk));
                                }
                                _ => fail(
                                    "assigned_object_id",
                                    format!("Related object not found using the provided numeric ID: {idv}"),
                                ),
                            }
                        }
                        _ => fail(
                            "assigned_object_type",
                            "Invalid value. Specify a content type as '<app_label>.<model_name>'.".into(),
                        ),
                    }
                }
                F::Terms => {
                    let Some(items) = v.as_array() else {
                        fail(f.name, "Expected a list of items.".into());
                        continue;
                    };
                    let mut out = Vec::new();
                    for t in items {
                        let ty = t.get("object_type").and_then(Value::as_str).unwrap_or("");
                        let pk = t.get("object_id").and_then(|x| {
                            x.as_u64().or_else(|| x.as_str().and_then(|s| s.parse().ok()))
                        });
                        match (Self::kind_of_ctype(ty), pk) {
                            (Some(k), Some(pk)) if self.db.get(k, pk).is_some() => {
                                out.push(json!({"object_type": ty, "object_id": pk}));
                            }
                            _ => fail(
                                f.name,
                                "Invalid cable termination: the assigned termination object does not exist.".into(),
                            ),
                        }
                    }
                    o.insert(f.name.into(), Value::Array(out));
                }
                F::Cf => {
                    let Some(given) = v.as_object() else {
                        fail(f.name, "Invalid data format. Custom field data must be passed as a dictionary mapping field names to their values.".into());
                        continue;
                    };
                    let defs: BTreeMap<String, String> = self
                        .db
                        .all("extras/custom-fields")
                        .filter(|d| {
                            d["object_types"]
                                .as_array()
                                .is_some_and(|t| t.iter().any(|x| x == s.ctype))
                        })
                        .filter_map(|d| {
                            Some((d["name"].as_str()?.to_string(), d["type"].as_str()?.to_string()))
                        })
                        .collect();
                    let mut cf = o.get(f.name).and_then(Value::as_object).cloned().unwrap_or_default();
                    let mut bad = Map::new();
                    for (k, val) in given {
                        match defs.get(k).map(String::as_str) {
                            None => {
                                bad.insert(
                                    k.clone(),
                                    json!(format!("Custom field '{k}' does not exist for this object type.")),
                                );
                            }
                            Some("integer") if !(val.is_i64() || val.is_null()) => {
                                bad.insert(k.clone(), json!("Value must be an integer."));
                            }
                            Some("text") if !(val.is_string() || val.is_null()) => {
                                bad.insert(k.clone(), json!("Value must be a string."));
                            }
                            _ => {
                                cf.insert(k.clone(), val.clone());
                            }
                        }
                    }
                    if bad.is_empty() {
                        o.insert(f.name.into(), Value::Object(cf));
                    } else {
                        cf_errors = Some(Value::Object(bad));
                    }
                }
                F::Mac => match v.as_str().and_then(mac_norm) {
                    Some(m) => {
                        o.insert(f.name.into(), json!(m));
                    }
                    None => fail(f.name, format!("Invalid MAC address format: {v}")),
                },
                F::Types => {
                    let ok = v.as_array().is_some_and(|a| {
                        a.iter()
                            .all(|t| t.as_str().and_then(Self::kind_of_ctype).is_some())
                    });
                    if ok {
                        o.insert(f.name.into(), v);
                    } else {
                        fail(f.name, format!("Invalid content type: {v}"));
                    }
                }
            }
        }
        if let Some(bad) = cf_errors {
            errors.insert("custom_fields".into(), bad);
        }
        if !errors.is_empty() {
            return Err(Value::Object(errors));
        }
        self.clean(s, &o, existing.is_none())?;
        Ok(o)
    }

    /// The model's `clean()` checks this server knows.
    fn clean(&self, s: &Spec, o: &Obj, adding: bool) -> Result<(), Errors> {
        let id = o.get("id").and_then(Value::as_u64);
        let others = || self.db.all(s.kind).filter(move |x| x["id"].as_u64() != id);
        match s.kind {
            "dcim/devices" => {
                let dup = o["name"].as_str().is_some_and(|n| !n.is_empty())
                    && others().any(|x| x["name"] == o["name"] && x["site"] == o["site"]);
                if dup {
                    return Err(
                        json!({"non_field_errors": ["Device name must be unique per site."]}),
                    );
                }
                self.clean_rack_position(o)?;
            }
            "dcim/racks" if !adding => {
                // `Rack.clean`: tall enough for its mounted devices.
                let height = o["u_height"].as_u64().unwrap_or(42);
                let top = (self.db.all("dcim/devices"))
                    .filter(|d| d["rack"] == o["id"])
                    .filter_map(|d| {
                        Some((d["position"].as_f64()? + self.type_height(d) - 1.0) as u64)
                    })
                    .max();
                if let Some(min) = top.filter(|m| *m > height) {
                    return Err(err(
                        "u_height",
                        format!(
                            "Rack must be at least {min}U tall to house currently installed devices."
                        ),
                    ));
                }
            }
            "dcim/interfaces" => {
                if others().any(|x| x["name"] == o["name"] && x["device"] == o["device"]) {
                    return Err(
                        json!({"non_field_errors": ["The fields device, name must make a unique set."]}),
                    );
                }
                let mode = o.get("mode").and_then(Value::as_str).unwrap_or("");
                if let Some(v) = o.get("untagged_vlan").and_then(Value::as_u64) {
                    if mode.is_empty() {
                        return Err(err(
                            "untagged_vlan",
                            "Interface mode does not support an untagged vlan.",
                        ));
                    }
                    let vlan_site = self
                        .db
                        .get("ipam/vlans", v)
                        .map(|x| x["site"].clone())
                        .unwrap_or(Value::Null);
                    let dev_site = device_of(&self.db, o)
                        .map(|d| d["site"].clone())
                        .unwrap_or(Value::Null);
                    if !vlan_site.is_null() && vlan_site != dev_site {
                        return Err(err(
                            "untagged_vlan",
                            format!(
                                "The untagged VLAN ({v}) must belong to the same site as the interface's parent device, or it must be global."
                            ),
                        ));
                    }
                }
                if let Some(m) = o.get("primary_mac_address").and_then(Value::as_u64)
                    && let Some(mac) = self.db.get("dcim/mac-addresses", m)
                {
                    let elsewhere = !mac["assigned_object_id"].is_null()
                        && (mac["assigned_object_type"] != "dcim.interface"
                            || mac["assigned_object_id"].as_u64() != id);
                    if elsewhere {
                        return Err(err(
                            "primary_mac_address",
                            format!(
                                "MAC address {} is assigned to a different interface ({}).",
                                mac["mac_address"].as_str().unwrap_or(""),
                                mac["assigned_object_id"]
                            ),
                        ));
                    }
                }
            }
            "dcim/cables" => {
                let ends = |k: &str| {
                    o.get(k)
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default()
                };
                let (a, b) = (ends("a_terminations"), ends("b_terminations"));
                if adding && (a.is_empty() || b.is_empty()) {
                    return Err(
                        json!({"non_field_errors": ["Must define A and B terminations when creating a new cable."]}),
                    );
                }
                if a.iter().any(|t| b.contains(t)) {
                    return Err(
                        json!({"non_field_errors": ["A and B terminations cannot connect to the same object."]}),
                    );
                }
                // `BaseCableProfile.clean`: at most a termination per
                // connector of the profile on each end (the terminations
                // take connectors 1.. in list order,
                // `Cable.update_terminations`).
                let profile = o.get("profile").and_then(Value::as_str).unwrap_or("");
                if !profile.is_empty() {
                    let (ca, cb, display) = profile_connectors(profile);
                    for (side, terms, max) in [("a", &a, ca), ("b", &b, cb)] {
                        if terms.len() > max {
                            return Err(err(
                                &format!("{side}_terminations"),
                                format!(
                                    "{} side of cable has {} terminations but only {max} are permitted for profile {display}",
                                    side.to_ascii_uppercase(),
                                    terms.len()
                                ),
                            ));
                        }
                    }
                }
                for t in a.iter().chain(&b) {
                    let tid = t["object_id"].as_u64().unwrap_or(0);
                    if t["object_type"] == "dcim.interface" {
                        if let Some((c, _)) = self.cable_of(tid).filter(|(c, _)| Some(*c) != id) {
                            return Err(json!({"non_field_errors": [format!(
                                "Duplicate termination found for dcim.interface {tid}: cable {c}"
                            )]}));
                        }
                        let ty = self
                            .db
                            .get("dcim/interfaces", tid)
                            .and_then(|i| i["type"].as_str())
                            .unwrap_or("");
                        if matches!(ty, "virtual" | "bridge" | "lag") {
                            return Err(json!({"non_field_errors": [format!(
                                "Cables cannot be terminated to {} interfaces", title(ty)
                            )]}));
                        }
                    }
                }
            }
            "extras/tags" => {
                for k in ["name", "slug"] {
                    if others().any(|x| x[k] == o[k]) {
                        return Err(err(k, format!("tag with this {k} already exists.")));
                    }
                }
            }
            "extras/custom-fields" if others().any(|x| x["name"] == o["name"]) => {
                return Err(err("name", "custom field with this name already exists."));
            }
            _ => {}
        }
        Ok(())
    }

    /// A device's height: its device type's `u_height`.
    fn type_height(&self, d: &Obj) -> f64 {
        d.get("device_type")
            .and_then(Value::as_u64)
            .and_then(|t| self.db.get("dcim/device-types", t))
            .and_then(|t| t["u_height"].as_f64())
            .unwrap_or(1.0)
    }

    /// `Device.clean`'s rack checks (`netbox/dcim/models/devices.py`,
    /// v4.6.8): the rack at the device's site, a face or a position only
    /// with a rack, a position in half units and with a face, and free
    /// units for the device type's height (`Rack.get_available_units`,
    /// `netbox/dcim/models/racks.py`: the units of every other positioned
    /// device of the rack on that face, both faces for a full-depth one,
    /// which every device type here is).
    fn clean_rack_position(&self, o: &Obj) -> Result<(), Errors> {
        let rack = o.get("rack").and_then(Value::as_u64);
        let face = o.get("face").and_then(Value::as_str).unwrap_or("");
        let position = o.get("position").and_then(Value::as_f64);
        let Some(rack) = rack.and_then(|r| self.db.get("dcim/racks", r)) else {
            if !face.is_empty() {
                return Err(err(
                    "face",
                    "Cannot select a rack face without assigning a rack.",
                ));
            }
            if position.is_some() {
                return Err(err(
                    "position",
                    "Cannot select a rack position without assigning a rack.",
                ));
            }
            return Ok(());
        };
        if rack["site"] != o["site"] {
            return Err(err(
                "rack",
                format!(
                    "Rack {} does not belong to site {}.",
                    rack["name"].as_str().unwrap_or(""),
                    o["site"]
                ),
            ));
        }
        let Some(p) = position else {
            return Ok(());
        };
        if (p * 2.0).fract() != 0.0 {
            return Err(err(
                "position",
                "Position must be in increments of 0.5 rack units.",
            ));
        }
        if face.is_empty() {
            return Err(err(
                "face",
                "Must specify rack face when defining rack position.",
            ));
        }
        let h = self.type_height(o);
        let top = rack["u_height"].as_f64().unwrap_or(42.0);
        let id = o.get("id").and_then(Value::as_u64);
        let taken = (self.db.all("dcim/devices"))
            .filter(|d| d["rack"] == rack["id"] && d["id"].as_u64() != id)
            .any(|d| {
                d["position"]
                    .as_f64()
                    .is_some_and(|q| q < p + h && p < q + self.type_height(d))
            });
        if p < 1.0 || p + h - 1.0 > top || taken {
            return Err(err(
                "position",
                format!(
                    "U{p} is already occupied or does not have sufficient space to accommodate this device type: {} ({h}U)",
                    o.get("device_type")
                        .and_then(Value::as_u64)
                        .and_then(|t| self.db.get("dcim/device-types", t))
                        .and_then(|t| t["model"].as_str())
                        .unwrap_or("")
                ),
            ));
        }
        Ok(())
    }

    fn store(&mut self, kind: &'static str, mut o: Obj) -> u64 {
        let id = match o.get("id").and_then(Value::as_u64) {
            Some(id) => id,
            None => {
                let id = self.db.next_id;
                self.db.next_id += 1;
                o.insert("id".into(), json!(id));
                o.insert(
                    "created".into(),
                    json!(format!("2026-01-01T00:00:00.{id:06}Z")),
                );
                id
            }
        };
        // DRF writes `last_updated` with `Z` for UTC.
        let tick = self.db.next_id + self.log.len() as u64;
        o.insert(
            "last_updated".into(),
            json!(format!("2026-01-02T00:00:00.{tick:06}Z")),
        );
        self.db.objects.entry(kind).or_default().insert(id, o);
        id
    }

    fn delete(&mut self, kind: &str, id: u64) -> bool {
        let gone = self
            .db
            .objects
            .get_mut(kind)
            .and_then(|m| m.remove(&id))
            .is_some();
        if gone && kind == "dcim/mac-addresses" {
            // The interface's primary MAC goes with it (on_delete SET_NULL).
            if let Some(ifaces) = self.db.objects.get_mut("dcim/interfaces") {
                for i in ifaces.values_mut() {
                    if i.get("primary_mac_address").and_then(Value::as_u64) == Some(id) {
                        i.insert("primary_mac_address".into(), Value::Null);
                    }
                }
            }
        }
        gone
    }

    fn authenticate(&self, header: Option<&str>) -> Result<(), (u16, Value)> {
        let Some(h) = header else {
            return Err((
                403,
                json!({"detail": "Authentication credentials were not provided."}),
            ));
        };
        let parts: Vec<&str> = h.split_whitespace().collect();
        let keyword = parts.first().map(|k| k.to_ascii_lowercase());
        if !matches!(keyword.as_deref(), Some("token" | "bearer")) {
            return Err((
                403,
                json!({"detail": "Authentication credentials were not provided."}),
            ));
        }
        if parts.len() != 2 {
            return Err((
                403,
                json!({"detail": "Invalid authorization header: Must be in the form \"Bearer <key>.<token>\" or \"Token <token>\""}),
            ));
        }
        let value = parts[1];
        match value.strip_prefix("nbt_") {
            None => {
                if self.v1.iter().any(|t| t == value) {
                    Ok(())
                } else {
                    Err((403, json!({"detail": "Invalid v1 token"})))
                }
            }
            Some(rest) => {
                let Some((key, plain)) = rest.split_once('.') else {
                    return Err((
                        403,
                        json!({"detail": "Invalid authorization header: Could not parse key from v2 token. Did you mean to use 'Token' instead of 'Bearer'?"}),
                    ));
                };
                if self.v2.iter().any(|(k, p)| k == key && p == plain) {
                    Ok(())
                } else {
                    Err((403, json!({"detail": "Invalid v2 token"})))
                }
            }
        }
    }

    /// One request: method, path with query, Authorization header, body.
    pub fn handle(
        &mut self,
        method: &str,
        uri: &str,
        auth: Option<&str>,
        body: &Value,
    ) -> (u16, Value) {
        let (status, v) = self.route(method, uri, auth, body);
        let path = uri.split('?').next().unwrap_or(uri).to_string();
        self.log.push(Logged {
            method: method.to_string(),
            path,
            status,
            if_match: self.if_match.clone(),
        });
        (status, v)
    }

    /// `ETagMixin._validate_etag` (`netbox/netbox/api/viewsets/__init__.py`,
    /// v4.6.8): an `If-Match` other than `*`, split at commas, must hold
    /// the object's current ETag, or the answer is 412 "Precondition
    /// failed." with the current ETag (`handle_exception`). Single-object
    /// PATCH, PUT and DELETE only: the bulk views do not check it.
    fn precondition_failed(&mut self, kind: &str, id: u64) -> bool {
        let Some(current) = self.db.get(kind, id).and_then(etag) else {
            return false;
        };
        let provided: Vec<String> = match self.if_match.as_deref() {
            None | Some("*") => return false,
            Some(h) => h.split(',').map(|e| e.trim().to_string()).collect(),
        };
        if provided.contains(&current) {
            return false;
        }
        self.etag_out = Some(current);
        true
    }

    /// Someone else saves object `id` again: its `last_updated` moves on.
    pub fn touch(&mut self, kind: &str, id: u64) {
        let tick = self.db.next_id + self.log.len() as u64 + 500_000;
        if let Some(o) = self.db.objects.get_mut(kind).and_then(|m| m.get_mut(&id)) {
            o.insert(
                "last_updated".into(),
                json!(format!("2026-01-02T00:00:00.{tick:06}Z")),
            );
        }
    }

    fn route(&mut self, method: &str, uri: &str, auth: Option<&str>, body: &Value) -> (u16, Value) {
        if let Err(e) = self.authenticate(auth) {
            return e;
        }
        let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
        let Some(rest) = path.strip_prefix("/api/") else {
            return (404, json!({"detail": "Not found."}));
        };
        let segs: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
        let (kind, id) = match segs.as_slice() {
            [app, model] => (format!("{app}/{model}"), None),
            [app, model, id] => match id.parse::<u64>() {
                Ok(id) => (format!("{app}/{model}"), Some(id)),
                Err(_) => return (404, json!({"detail": "Not found."})),
            },
            _ => return (404, json!({"detail": "Not found."})),
        };
        let Some(s) = spec(&kind) else {
            return (404, json!({"detail": "Not found."}));
        };
        match (method, id) {
            ("GET", None) => self.list(s, query),
            ("GET", Some(id)) => match self.db.get(s.kind, id) {
                Some(o) => {
                    self.etag_out = etag(o);
                    let v = self.render(s, o, None);
                    if self.edit_after_get.as_deref() == Some(s.kind) {
                        self.edit_after_get = None;
                        self.touch(s.kind, id);
                    }
                    (200, v)
                }
                None => (404, json!({"detail": "No object matches the given query."})),
            },
            ("POST", None) => self.create(s, body),
            ("PATCH" | "PUT", None) => self.bulk_update(s, body),
            ("PATCH" | "PUT" | "DELETE", Some(id)) if self.precondition_failed(s.kind, id) => {
                (412, json!({"detail": "Precondition failed."}))
            }
            ("PATCH" | "PUT", Some(id)) => {
                let mut b = body.clone();
                if let Some(o) = b.as_object_mut() {
                    o.insert("id".into(), json!(id));
                }
                match self.bulk_update(s, &Value::Array(vec![b])) {
                    (200, Value::Array(mut a)) => {
                        self.etag_out = self.db.get(s.kind, id).and_then(etag);
                        (200, a.pop().unwrap_or(Value::Null))
                    }
                    (st, Value::Array(mut a)) => (st, a.pop().unwrap_or(Value::Null)),
                    other => other,
                }
            }
            ("DELETE", Some(id)) => {
                if self.delete(s.kind, id) {
                    (204, Value::Null)
                } else {
                    (404, json!({"detail": "No object matches the given query."}))
                }
            }
            ("DELETE", None) => {
                let ids: Vec<u64> = body
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x["id"].as_u64())
                    .collect();
                if ids.iter().any(|i| self.db.get(s.kind, *i).is_none()) {
                    return (404, json!({"detail": "No object matches the given query."}));
                }
                for i in ids {
                    self.delete(s.kind, i);
                }
                (204, Value::Null)
            }
            _ => (
                405,
                json!({"detail": format!("Method \"{method}\" not allowed.")}),
            ),
        }
    }

    fn list(&self, s: &Spec, query: &str) -> (u16, Value) {
        let mut params: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            params.entry(decode(k)).or_default().push(decode(v));
        }
        let one = |k: &str| params.get(k).and_then(|v| v.first()).cloned();
        let limit = match one("limit").map(|l| l.parse::<usize>()) {
            None => 50,
            Some(Ok(0)) | Some(Ok(1001..)) => 1000,
            Some(Ok(l)) => l,
            Some(Err(_)) => 50,
        };
        let offset = one("offset")
            .and_then(|o| o.parse::<usize>().ok())
            .unwrap_or(0);
        let mut errors = Map::new();
        let mut active: Vec<(&Filter, &Vec<String>)> = Vec::new();
        for f in s.filters {
            let Some(values) = params.get(f.param) else {
                continue;
            };
            if let Some((kind, attr)) = f.validated {
                for v in values {
                    let known = self.db.all(kind).any(|o| scalar(o, attr).contains(v));
                    if !known {
                        errors.insert(
                            f.param.to_string(),
                            json!([format!(
                                "Select a valid choice. {v} is not one of the available choices."
                            )]),
                        );
                    }
                }
            }
            active.push((f, values));
        }
        if !errors.is_empty() {
            return (400, Value::Object(errors));
        }
        let matched: Vec<&Obj> = self
            .db
            .all(s.kind)
            .filter(|o| {
                active.iter().all(|(f, values)| {
                    let have = (f.on)(&self.db, o);
                    values.iter().any(|v| {
                        have.iter().any(|h| {
                            if f.param == "mac_address" {
                                mac_norm(v).as_deref() == Some(h.as_str())
                            } else {
                                h == v
                            }
                        })
                    })
                })
            })
            .collect();
        let count = matched.len();
        let brief = one("brief").is_some_and(|b| b == "true" || b == "1" || b == "True");
        let results: Vec<Value> = matched
            .iter()
            .skip(offset)
            .take(limit)
            .map(|o| self.render(s, o, brief.then_some(s.brief)))
            .collect();
        let page = |off: usize| {
            let mut q: Vec<String> = query
                .split('&')
                .filter(|p| !p.is_empty() && !p.starts_with("limit=") && !p.starts_with("offset="))
                .map(str::to_string)
                .collect();
            q.push(format!("limit={limit}"));
            if off > 0 {
                q.push(format!("offset={off}"));
            }
            format!("{}/api/{}/?{}", self.base, s.kind, q.join("&"))
        };
        let next = (offset + limit < count).then(|| page(offset + limit));
        let previous = (offset > 0).then(|| page(offset.saturating_sub(limit)));
        (
            200,
            json!({"count": count, "next": next, "previous": previous, "results": results}),
        )
    }

    fn create(&mut self, s: &Spec, body: &Value) -> (u16, Value) {
        let (items, many) = match body {
            Value::Array(a) => (a.clone(), true),
            other => (vec![other.clone()], false),
        };
        // All or none: validate each against the state plus those before
        // it in the same request.
        let snapshot = self.db.objects.clone();
        let next = self.db.next_id;
        let mut errors = Vec::new();
        let mut ids = Vec::new();
        for it in &items {
            match self.validate(s, it, None) {
                Ok(o) => {
                    ids.push(self.store(s.kind, o));
                    errors.push(json!({}));
                }
                Err(e) => errors.push(e),
            }
        }
        if errors.iter().any(|e| e != &json!({})) {
            self.db.objects = snapshot;
            self.db.next_id = next;
            return (
                400,
                if many {
                    Value::Array(errors)
                } else {
                    errors.remove(0)
                },
            );
        }
        let out: Vec<Value> = ids
            .iter()
            .filter_map(|id| self.db.get(s.kind, *id).map(|o| self.render(s, o, None)))
            .collect();
        (
            201,
            if many {
                Value::Array(out)
            } else {
                out.into_iter().next().unwrap_or(Value::Null)
            },
        )
    }

    fn bulk_update(&mut self, s: &Spec, body: &Value) -> (u16, Value) {
        let Some(items) = body.as_array() else {
            return (
                400,
                json!({"non_field_errors": ["Expected a list of items but got type \"dict\"."]}),
            );
        };
        let snapshot = self.db.objects.clone();
        let mut errors = Vec::new();
        let mut ids = Vec::new();
        for it in items {
            let Some(id) = it
                .get("id")
                .and_then(|x| x.as_u64().or_else(|| x.as_str()?.parse().ok()))
            else {
                errors.push(err("id", "This field is required."));
                continue;
            };
            let Some(existing) = self.db.get(s.kind, id).cloned() else {
                self.db.objects = snapshot;
                return (404, json!({"detail": "No object matches the given query."}));
            };
            match self.validate(s, it, Some(&existing)) {
                Ok(o) => {
                    self.store(s.kind, o);
                    ids.push(id);
                    errors.push(json!({}));
                }
                Err(e) => errors.push(e),
            }
        }
        if errors.iter().any(|e| e != &json!({})) {
            self.db.objects = snapshot;
            return (400, Value::Array(errors));
        }
        let out: Vec<Value> = ids
            .iter()
            .filter_map(|id| self.db.get(s.kind, *id).map(|o| self.render(s, o, None)))
            .collect();
        (200, Value::Array(out))
    }
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match u8::from_str_radix(&s[i + 1..i + 3], 16) {
                Ok(x) => {
                    out.push(x);
                    i += 2;
                }
                Err(_) => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The server's state, even after a request thread panicked holding it
/// (a test's hook): the next requests are answered, not panicked on.
fn lock(nb: &Mutex<NetBox>) -> std::sync::MutexGuard<'_, NetBox> {
    nb.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// gunicorn's default `limit_request_line` (module documentation).
const REQUEST_LINE_LIMIT: usize = 4094;

/// Serves `nb` over plain HTTP on a loopback port (in the current tokio
/// runtime); returns the base URL.
pub async fn serve(nb: Arc<Mutex<NetBox>>) -> String {
    let handler = nb.clone();
    let addr = crate::http_server::serve(None, move |req: Received| {
        let nb = handler.clone();
        async move {
            let (method, uri) = (req.method.clone(), req.uri.clone());
            let line = format!("{method} {uri} HTTP/1.1").len();
            if line > REQUEST_LINE_LIMIT {
                let mut r = Response::new(Full::new(Bytes::from(format!(
                    "Bad Request\nRequest Line is too large ({line} > {REQUEST_LINE_LIMIT})"
                ))));
                *r.status_mut() = StatusCode::BAD_REQUEST;
                lock(&nb).log.push(Logged {
                    method,
                    path: uri.split('?').next().unwrap_or("").to_string(),
                    status: 400,
                    if_match: None,
                });
                return Ok::<_, std::io::Error>(r);
            }
            let auth = req.header(hyper::header::AUTHORIZATION);
            let if_match = req.header(hyper::header::IF_MATCH);
            let body = req.json();
            let (status, v, etag, spoil) = match body {
                Ok(body) => {
                    let mut nb = lock(&nb);
                    nb.if_match = if_match;
                    nb.etag_out = None;
                    let (status, v) = nb.handle(&method, &uri, auth.as_deref(), &body);
                    nb.if_match = None;
                    (status, v, nb.etag_out.take(), nb.spoil.clone())
                }
                Err(e) => (
                    400,
                    json!({"detail": format!("JSON parse error - {e}")}),
                    None,
                    lock(&nb).spoil.clone(),
                ),
            };
            let (status, body) = match spoil.and_then(|f| f(&method, &uri, status, &v)) {
                Some((s, bytes)) => (s, Bytes::from(bytes)),
                None if status == 204 => (status, Bytes::new()),
                None => (status, Bytes::from(v.to_string())),
            };
            let mut r = Response::new(Full::new(body));
            *r.status_mut() =
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            r.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("application/json"),
            );
            if let Some(e) = etag.and_then(|e| hyper::header::HeaderValue::from_str(&e).ok()) {
                r.headers_mut().insert(hyper::header::ETAG, e);
            }
            Ok::<_, std::io::Error>(r)
        }
    })
    .await;
    let base = format!("http://{addr}");
    lock(&nb).base = base.clone();
    base
}
