//! Checks Kubernetes objects against a CustomResourceDefinition's
//! `openAPIV3Schema`, the way the API server's structural-schema validation
//! would, before anything is sent to a cluster.
//!
//! Covered: `type` (and `format` int32, int64, date-time), `properties`,
//! `required`, `additionalProperties`, `items`, `enum`, `pattern`,
//! `minimum`/`maximum`, `minLength`/`maxLength`, `minItems`/`maxItems`,
//! `anyOf`, `nullable`, `x-kubernetes-int-or-string`,
//! `x-kubernetes-preserve-unknown-fields`, and the object's own `apiVersion`,
//! `kind` and `metadata` (name, namespace, labels, annotations). A field the
//! schema does not know is reported: the API server would silently drop it.
//!
//! Not evaluated: CEL rules (`x-kubernetes-validations`). They are listed by
//! [`CrdSchema::cel_rules`] with their paths so that a test can check each
//! one by hand.

use regex::Regex;
use serde_json::{Map, Value};

use planner::export::k8s_names::{
    dns_label_problem, dns_subdomain_problem, label_value_problem, qualified_name_problem,
};

use crate::error::{Error, Result};

/// Whether objects of a CRD live in a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `metadata.namespace` belongs to the object.
    Namespaced,
    /// No namespace.
    Cluster,
}

/// One served version of a CRD, ready to check objects.
#[derive(Debug, Clone)]
pub struct CrdSchema {
    /// API group, e.g. `kubeflow.org`.
    pub group: String,
    /// Kind, e.g. `MPIJob`.
    pub kind: String,
    /// Version, e.g. `v2beta1`.
    pub version: String,
    /// Namespaced or cluster-wide.
    pub scope: Scope,
    schema: Value,
}

/// A CEL validation rule of the schema, which this module does not evaluate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CelRule {
    /// Where the rule applies, e.g. `.spec.levels`.
    pub path: String,
    /// The CEL expression.
    pub rule: String,
    /// The message the API server prints when it fails.
    pub message: String,
}

impl CrdSchema {
    /// Reads a CRD (YAML, as its project publishes it) and takes the schema of
    /// `version`. `file` names the input in errors.
    pub fn from_yaml(text: &str, file: &str, version: &str) -> Result<Self> {
        let crd: Value = serde_norway::from_str(text).map_err(|e| {
            let (line, column) = e.location().map_or((1, 1), |l| (l.line(), l.column()));
            Error::Syntax {
                file: file.to_string(),
                line,
                column,
                message: e.to_string(),
            }
        })?;
        let invalid = |message: String| Error::Crd {
            file: file.to_string(),
            message,
        };
        if crd.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition") {
            return Err(invalid(
                "not a CustomResourceDefinition (its `kind` must be CustomResourceDefinition)"
                    .into(),
            ));
        }
        let spec = crd
            .get("spec")
            .ok_or_else(|| invalid("the CRD has no `spec`".into()))?;
        let text_of = |v: Option<&Value>, what: &str| {
            v.and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| invalid(format!("the CRD has no `{what}`")))
        };
        let group = text_of(spec.get("group"), "spec.group")?;
        let kind = text_of(spec.pointer("/names/kind"), "spec.names.kind")?;
        let scope = match spec.get("scope").and_then(Value::as_str) {
            Some("Cluster") => Scope::Cluster,
            _ => Scope::Namespaced,
        };
        let versions = spec
            .get("versions")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid("the CRD has no `spec.versions`".into()))?;
        let names: Vec<&str> = versions
            .iter()
            .filter_map(|v| v.get("name").and_then(Value::as_str))
            .collect();
        let found = versions
            .iter()
            .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
            .ok_or_else(|| {
                invalid(format!(
                    "version {version} is not in the CRD; it has {}",
                    names.join(", ")
                ))
            })?;
        let schema = found
            .pointer("/schema/openAPIV3Schema")
            .cloned()
            .ok_or_else(|| {
                invalid(format!(
                    "version {version} has no schema.openAPIV3Schema to check against"
                ))
            })?;
        Ok(CrdSchema {
            group,
            kind,
            version: version.to_string(),
            scope,
            schema,
        })
    }

    /// The `apiVersion` objects of this schema carry.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }

    /// Every problem of `object`, each naming its path (`.spec.levels[0]`);
    /// empty when the API server would accept it (CEL rules aside).
    pub fn validate(&self, object: &Value) -> Vec<String> {
        let mut out = Vec::new();
        let Some(map) = object.as_object() else {
            out.push(format!("the object is {}, not a mapping", kind_of(object)));
            return out;
        };
        let api_version = self.api_version();
        match map.get("apiVersion").and_then(Value::as_str) {
            Some(v) if v == api_version => {}
            Some(v) => out.push(format!(".apiVersion: {v}, expected {api_version}")),
            None => out.push(format!(".apiVersion: missing, expected {api_version}")),
        }
        match map.get("kind").and_then(Value::as_str) {
            Some(k) if k == self.kind => {}
            Some(k) => out.push(format!(".kind: {k}, expected {}", self.kind)),
            None => out.push(format!(".kind: missing, expected {}", self.kind)),
        }
        match map.get("metadata") {
            Some(m) => check_metadata(m, self.scope, &mut out),
            None => out.push(".metadata: missing (it needs at least a name)".into()),
        }
        let mut checker = Checker { out: &mut out };
        checker.object(&self.schema, map, "", &["apiVersion", "kind", "metadata"]);
        out
    }

    /// The CEL rules of the schema, with their paths (array items as `[*]`,
    /// map values as `.*`).
    pub fn cel_rules(&self) -> Vec<CelRule> {
        let mut rules = Vec::new();
        collect_cel(&self.schema, "", &mut rules);
        rules
    }
}

fn collect_cel(schema: &Value, path: &str, rules: &mut Vec<CelRule>) {
    if let Some(list) = schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
    {
        for r in list {
            rules.push(CelRule {
                path: if path.is_empty() {
                    ".".into()
                } else {
                    path.into()
                },
                rule: r.get("rule").and_then(Value::as_str).unwrap_or("").into(),
                message: r
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .into(),
            });
        }
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, s) in props {
            collect_cel(s, &format!("{path}.{k}"), rules);
        }
    }
    if let Some(items) = schema.get("items") {
        collect_cel(items, &format!("{path}[*]"), rules);
    }
    if let Some(extra) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        collect_cel(extra, &format!("{path}.*"), rules);
    }
}

struct Checker<'a> {
    out: &'a mut Vec<String>,
}

impl Checker<'_> {
    fn value(&mut self, schema: &Value, value: &Value, path: &str) {
        let at = if path.is_empty() { "." } else { path };
        if value.is_null() {
            if schema.get("nullable").and_then(Value::as_bool) != Some(true) {
                self.out.push(format!(
                    "{at}: null is not allowed here (the API server drops it; omit the field)"
                ));
            }
            return;
        }
        if let Some(alternatives) = schema.get("anyOf").and_then(Value::as_array) {
            let fits = alternatives.iter().any(|alt| {
                let mut scratch = Vec::new();
                Checker { out: &mut scratch }.value(alt, value, path);
                scratch.is_empty()
            });
            if !fits {
                self.out.push(format!(
                    "{at}: {} fits none of the schema's alternatives (anyOf)",
                    kind_of(value)
                ));
            }
        }
        if schema
            .get("x-kubernetes-int-or-string")
            .and_then(Value::as_bool)
            == Some(true)
        {
            if !(value.is_string() || value.is_i64() || value.is_u64()) {
                self.out.push(format!(
                    "{at}: {} where an integer or a string is expected",
                    kind_of(value)
                ));
            }
            self.scalar_rules(schema, value, at);
            return;
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("object") => match value.as_object() {
                Some(map) => self.object(schema, map, path, &[]),
                None => self.wrong_type(at, "an object", value),
            },
            Some("array") => match value.as_array() {
                Some(list) => self.array(schema, list, path),
                None => self.wrong_type(at, "an array", value),
            },
            Some("string") => {
                if value.is_string() {
                    self.scalar_rules(schema, value, at);
                } else {
                    self.wrong_type(at, "a string", value);
                }
            }
            Some("integer") => {
                if value.is_i64() || value.is_u64() {
                    self.scalar_rules(schema, value, at);
                } else {
                    self.wrong_type(at, "an integer", value);
                }
            }
            Some("number") => {
                if value.is_number() {
                    self.scalar_rules(schema, value, at);
                } else {
                    self.wrong_type(at, "a number", value);
                }
            }
            Some("boolean") => {
                if !value.is_boolean() {
                    self.wrong_type(at, "a boolean", value);
                }
            }
            Some(other) => self
                .out
                .push(format!("{at}: the schema names an unknown type {other}")),
            None => {
                if let Some(map) = value.as_object()
                    && schema.get("properties").is_some()
                {
                    self.object(schema, map, path, &[]);
                }
            }
        }
    }

    fn wrong_type(&mut self, at: &str, want: &str, value: &Value) {
        self.out
            .push(format!("{at}: {} where {want} is expected", kind_of(value)));
    }

    fn object(&mut self, schema: &Value, map: &Map<String, Value>, path: &str, skip: &[&str]) {
        let props = schema.get("properties").and_then(Value::as_object);
        let extra = schema.get("additionalProperties");
        let preserve = schema
            .get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            == Some(true);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for r in required.iter().filter_map(Value::as_str) {
                if !skip.contains(&r) && !map.contains_key(r) {
                    self.out.push(format!("{path}.{r}: required but missing"));
                }
            }
        }
        for (key, value) in map {
            if skip.contains(&key.as_str()) {
                continue;
            }
            let child = format!("{path}.{key}");
            if let Some(s) = props.and_then(|p| p.get(key)) {
                self.value(s, value, &child);
            } else if let Some(s) = extra.filter(|e| e.is_object()) {
                self.value(s, value, &child);
            } else if extra.and_then(Value::as_bool) == Some(true) || preserve {
                continue;
            } else {
                self.out.push(format!(
                    "{child}: unknown field (the schema has no such property; the API server would drop it)"
                ));
            }
        }
        self.size_rules(schema, map.len(), path, "properties");
    }

    fn array(&mut self, schema: &Value, list: &[Value], path: &str) {
        if let Some(items) = schema.get("items") {
            for (i, v) in list.iter().enumerate() {
                self.value(items, v, &format!("{path}[{i}]"));
            }
        }
        self.size_rules(schema, list.len(), path, "items");
        let keys: Vec<&str> = schema
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|k| k.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let list_type = schema.get("x-kubernetes-list-type").and_then(Value::as_str);
        if list_type == Some("set") || (list_type == Some("map") && !keys.is_empty()) {
            let mut seen: Vec<Value> = Vec::new();
            for (i, v) in list.iter().enumerate() {
                let key = if list_type == Some("set") {
                    v.clone()
                } else {
                    Value::Array(
                        keys.iter()
                            .map(|k| v.get(*k).cloned().unwrap_or(Value::Null))
                            .collect(),
                    )
                };
                if seen.contains(&key) {
                    self.out.push(format!(
                        "{path}[{i}]: duplicate entry {key} in a list of type {}",
                        list_type.unwrap_or_default()
                    ));
                } else {
                    seen.push(key);
                }
            }
        }
    }

    fn size_rules(&mut self, schema: &Value, len: usize, path: &str, what: &str) {
        let at = if path.is_empty() { "." } else { path };
        let (min_key, max_key) = if what == "items" {
            ("minItems", "maxItems")
        } else {
            ("minProperties", "maxProperties")
        };
        if let Some(min) = schema.get(min_key).and_then(Value::as_u64)
            && (len as u64) < min
        {
            self.out
                .push(format!("{at}: {len} {what}, at least {min} required"));
        }
        if let Some(max) = schema.get(max_key).and_then(Value::as_u64)
            && len as u64 > max
        {
            self.out
                .push(format!("{at}: {len} {what}, at most {max} allowed"));
        }
    }

    fn scalar_rules(&mut self, schema: &Value, value: &Value, at: &str) {
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
            && !allowed.contains(value)
        {
            let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
            self.out
                .push(format!("{at}: {value} is not one of {}", list.join(", ")));
        }
        if let Some(s) = value.as_str() {
            let chars = s.chars().count() as u64;
            if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
                && chars < min
            {
                self.out
                    .push(format!("{at}: {s:?} is shorter than {min} characters"));
            }
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
                && chars > max
            {
                self.out
                    .push(format!("{at}: {s:?} is longer than {max} characters"));
            }
            if let Some(p) = schema.get("pattern").and_then(Value::as_str) {
                match Regex::new(p) {
                    Ok(re) if re.is_match(s) => {}
                    Ok(_) => self
                        .out
                        .push(format!("{at}: {s:?} does not match the pattern {p}")),
                    Err(_) => self
                        .out
                        .push(format!("{at}: the schema's pattern {p} cannot be compiled")),
                }
            }
            if schema.get("format").and_then(Value::as_str) == Some("date-time") && !is_date_time(s)
            {
                self.out
                    .push(format!("{at}: {s:?} is not an RFC 3339 date-time"));
            }
        }
        if let Some(n) = value.as_f64() {
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
                && n < min
            {
                self.out
                    .push(format!("{at}: {value} is below the minimum {min}"));
            }
            if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
                && n > max
            {
                self.out
                    .push(format!("{at}: {value} is above the maximum {max}"));
            }
            if schema.get("format").and_then(Value::as_str) == Some("int32")
                && value.as_i64().is_some_and(|i| i32::try_from(i).is_err())
            {
                self.out
                    .push(format!("{at}: {value} does not fit in a 32-bit integer"));
            }
        }
    }
}

fn is_date_time(s: &str) -> bool {
    Regex::new(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
        .is_ok_and(|re| re.is_match(s))
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The API server's checks of `metadata` (which CRD schemas leave open).
fn check_metadata(meta: &Value, scope: Scope, out: &mut Vec<String>) {
    let Some(map) = meta.as_object() else {
        out.push(format!(
            ".metadata: {} where an object is expected",
            kind_of(meta)
        ));
        return;
    };
    match map.get("name").and_then(Value::as_str) {
        Some(name) => {
            if let Some(why) = dns_subdomain_problem(name) {
                out.push(format!(".metadata.name: {name:?} {why}"));
            }
        }
        None => {
            if map.get("generateName").is_none() {
                out.push(".metadata.name: missing".into());
            }
        }
    }
    if let Some(ns) = map.get("namespace") {
        match (scope, ns.as_str()) {
            (Scope::Cluster, _) => out.push(
                ".metadata.namespace: this kind is cluster-scoped; remove the namespace".into(),
            ),
            (Scope::Namespaced, Some(n)) => {
                if let Some(why) = dns_label_problem(n) {
                    out.push(format!(".metadata.namespace: {n:?} {why}"));
                }
            }
            (Scope::Namespaced, None) => {
                out.push(".metadata.namespace: must be a string".into());
            }
        }
    }
    for field in ["labels", "annotations"] {
        let Some(v) = map.get(field) else { continue };
        let Some(entries) = v.as_object() else {
            out.push(format!(".metadata.{field}: must be a mapping of strings"));
            continue;
        };
        for (k, v) in entries {
            if let Some(why) = qualified_name_problem(k) {
                out.push(format!(".metadata.{field}: key {k:?} {why}"));
            }
            match v.as_str() {
                Some(s) if field == "labels" => {
                    if let Some(why) = label_value_problem(s) {
                        out.push(format!(".metadata.labels[{k:?}]: value {s:?} {why}"));
                    }
                }
                Some(_) => {}
                None => out.push(format!(".metadata.{field}[{k:?}]: must be a string")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.org
spec:
  group: example.org
  names:
    kind: Widget
  scope: Namespaced
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, format: int32, minimum: 1}
              mode: {type: string, enum: [fast, slow]}
              name: {type: string, pattern: '^[a-z]+$', maxLength: 5}
              port:
                anyOf: [{type: integer}, {type: string}]
                x-kubernetes-int-or-string: true
              tags:
                type: array
                maxItems: 2
                x-kubernetes-list-type: set
                items: {type: string}
              env:
                type: object
                additionalProperties: {type: string}
              free:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              levels:
                type: array
                items: {type: object}
                x-kubernetes-validations:
                - rule: size(self) > 0
                  message: needs levels
"#;

    fn schema() -> CrdSchema {
        CrdSchema::from_yaml(CRD, "widget.yaml", "v1").unwrap()
    }

    fn object(spec: Value) -> Value {
        json!({"apiVersion": "example.org/v1", "kind": "Widget",
               "metadata": {"name": "w-1", "namespace": "default", "labels": {"a.b/c": "d"}},
               "spec": spec})
    }

    #[test]
    fn a_valid_object_has_no_problems() {
        let o = object(
            json!({"size": 3, "mode": "fast", "name": "abc", "port": "http",
            "tags": ["x", "y"], "env": {"A": "1"}, "free": {"anything": [1, 2]}}),
        );
        assert_eq!(schema().validate(&o), Vec::<String>::new());
        let o = object(json!({"size": 3, "port": 8080}));
        assert_eq!(schema().validate(&o), Vec::<String>::new());
    }

    #[test]
    fn every_rule_reports_its_path() {
        let o = object(json!({"mode": "medium", "name": "ABCDEFG", "port": true,
            "tags": ["x", "x", "y"], "env": {"A": 1}, "colour": "red"}));
        let problems = schema().validate(&o);
        let want = [
            ".spec.size: required but missing",
            ".spec.mode: \"medium\" is not one of \"fast\", \"slow\"",
            ".spec.name: \"ABCDEFG\" is longer than 5 characters",
            ".spec.name: \"ABCDEFG\" does not match the pattern ^[a-z]+$",
            ".spec.port: a boolean fits none of the schema's alternatives (anyOf)",
            ".spec.port: a boolean where an integer or a string is expected",
            ".spec.tags: 3 items, at most 2 allowed",
            ".spec.tags[1]: duplicate entry \"x\" in a list of type set",
            ".spec.env.A: a number where a string is expected",
            ".spec.colour: unknown field (the schema has no such property; the API server would drop it)",
        ];
        for w in want {
            assert!(
                problems.iter().any(|p| p == w),
                "missing {w:?} in {problems:#?}"
            );
        }
        assert_eq!(problems.len(), want.len(), "{problems:#?}");
    }

    #[test]
    fn numbers_respect_minimum_and_int32() {
        let problems = schema().validate(&object(json!({"size": 0})));
        assert_eq!(problems, [".spec.size: 0 is below the minimum 1"]);
        let problems = schema().validate(&object(json!({"size": 5_000_000_000_i64})));
        assert_eq!(
            problems,
            [".spec.size: 5000000000 does not fit in a 32-bit integer"]
        );
        let problems = schema().validate(&object(json!({"size": 1.5})));
        assert_eq!(
            problems,
            [".spec.size: a number where an integer is expected"]
        );
    }

    #[test]
    fn header_and_metadata_are_checked() {
        let o = json!({"apiVersion": "example.org/v2", "kind": "Gadget",
            "metadata": {"name": "Bad_Name", "labels": {"ok": "no spaces!"}},
            "spec": {"size": 1}});
        let problems = schema().validate(&o);
        assert_eq!(problems.len(), 4, "{problems:#?}");
        assert!(problems[0].starts_with(".apiVersion: example.org/v2, expected example.org/v1"));
        assert!(problems[1].starts_with(".kind: Gadget, expected Widget"));
        assert!(problems[2].starts_with(".metadata.name: \"Bad_Name\" has a part"));
        assert!(problems[3].starts_with(".metadata.labels[\"ok\"]: value \"no spaces!\""));
    }

    #[test]
    fn cel_rules_are_listed_not_evaluated() {
        assert_eq!(
            schema().cel_rules(),
            [CelRule {
                path: ".spec.levels".into(),
                rule: "size(self) > 0".into(),
                message: "needs levels".into()
            }]
        );
    }

    #[test]
    fn bad_crd_files_name_the_problem() {
        let err = CrdSchema::from_yaml("a: [1,", "x.yaml", "v1").unwrap_err();
        assert!(err.to_string().starts_with("x.yaml:"), "{err}");
        let err = CrdSchema::from_yaml(CRD, "widget.yaml", "v9").unwrap_err();
        assert!(
            err.to_string()
                .contains("version v9 is not in the CRD; it has v1"),
            "{err}"
        );
        let err = CrdSchema::from_yaml("kind: Pod", "pod.yaml", "v1").unwrap_err();
        assert!(
            err.to_string().contains("not a CustomResourceDefinition"),
            "{err}"
        );
    }

    /// The CRDs shipped beside the repository (`../shared/k8s-crds/`), or
    /// `None` when the test skips (see `testkit::crds::text`).
    fn shared_crd(file: &str, version: &str) -> Option<CrdSchema> {
        let test = "the_shared_crds_load_and_check_a_hand_written_object";
        let text = testkit::crds::text(test, file)?;
        Some(CrdSchema::from_yaml(&text, file, version).unwrap())
    }

    #[test]
    fn the_shared_crds_load_and_check_a_hand_written_object() {
        let Some(mpijob) = shared_crd("kubeflow.org_mpijobs.yaml", "v2beta1") else {
            return;
        };
        assert_eq!(
            (mpijob.kind.as_str(), mpijob.scope),
            ("MPIJob", Scope::Namespaced)
        );
        let job = json!({
            "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": "allreduce", "namespace": "ml"},
            "spec": {
                "slotsPerWorker": 1,
                "runPolicy": {"cleanPodPolicy": "Running"},
                "mpiReplicaSpecs": {
                    "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                        {"name": "launcher", "image": "mpi:1", "command": ["mpirun"]}]}}},
                    "Worker": {"replicas": 2, "template": {"spec": {"containers": [
                        {"name": "worker", "image": "mpi:1",
                         "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}
                }
            }
        });
        assert_eq!(mpijob.validate(&job), Vec::<String>::new());
        let mut bad = job.clone();
        bad["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = json!("two");
        assert_eq!(
            mpijob.validate(&bad),
            [".spec.mpiReplicaSpecs.Worker.replicas: a string where an integer is expected"]
        );
        let Some(kueue) = shared_crd("kueue.x-k8s.io_topologies.yaml", "v1beta2") else {
            return;
        };
        assert_eq!(kueue.scope, Scope::Cluster);
        assert!(
            kueue
                .cel_rules()
                .iter()
                .any(|r| r.message == "must be unique")
        );
        let Some(volcano) = shared_crd("topology.volcano.sh_hypernodes.yaml", "v1alpha1") else {
            return;
        };
        assert_eq!(volcano.kind, "HyperNode");
    }
}
