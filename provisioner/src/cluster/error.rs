//! Errors of the Kubernetes side of the provisioner.

use std::fmt::Write as _;

/// What can go wrong talking to a cluster.
///
/// [`Error::is_bad_input`] tells the binaries which errors the user can fix
/// (exit code 2) and which are failures of the cluster or of this program
/// (exit code 1).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No kubeconfig, or one that cannot be used.
    #[error(
        "cannot reach a Kubernetes cluster: {message}; point KUBECONFIG at a kubeconfig file, write ~/.kube/config (e.g. with your cloud's `get-credentials` command), or run inside a pod with a service account"
    )]
    Config {
        /// What kube-rs said about the configuration.
        message: String,
    },

    /// A request the API server refused or that failed on the way.
    #[error("{action}: {}", api_message(source))]
    Api {
        /// What was being done, e.g. `listing Nodes`.
        action: String,
        /// The client's error (boxed: it is large).
        #[source]
        source: Box<kube::Error>,
    },

    /// The plan or node map cannot be bound to Nodes.
    #[error(transparent)]
    Bind(#[from] crate::Error),

    /// The plan's labels cannot be computed (e.g. a bad `--prefix`).
    #[error(transparent)]
    Labels(#[from] planner::Error),

    /// Plan servers whose Node the cluster does not have.
    #[error(
        "{} of the plan's {planned} servers have no Node in the cluster: {}; fix the node map (`--node-map`), join the nodes, or pass --allow-missing to label the Nodes that exist",
        missing.len(),
        list_missing(missing)
    )]
    MissingNodes {
        /// `(server, node)` pairs.
        missing: Vec<(String, String)>,
        /// Servers in the plan.
        planned: usize,
    },

    /// A quantity of the GPU resource that is not a whole number.
    #[error(
        "{object}: {resource} is `{value}`, not a whole number of devices; check the device plugin or the pod's resources"
    )]
    Quantity {
        /// `Node x` or `Pod ns/x container c`.
        object: String,
        /// The resource name, e.g. `nvidia.com/gpu`.
        resource: String,
        /// The quantity as the API returned it.
        value: String,
    },

    /// A manifest that cannot be applied as it is.
    #[error("{object}: {message}")]
    Manifest {
        /// The object, as far as it is known.
        object: String,
        /// What is wrong.
        message: String,
    },

    /// The custom resource's definition is not installed.
    #[error(
        "the cluster has no {resource} resource (API {api_version} answered 404 when applying {kind} {name}); {hint}"
    )]
    CrdMissing {
        /// Kind of the object, e.g. `MPIJob`.
        kind: String,
        /// Its name.
        name: String,
        /// `plural.group`, e.g. `mpijobs.kubeflow.org`.
        resource: String,
        /// `group/version`.
        api_version: String,
        /// What to install.
        hint: String,
    },

    /// No Job or MPIJob of that name.
    #[error(
        "no Job or MPIJob named {name} in namespace {namespace}; list them with `kubectl get jobs,mpijobs -n {namespace}` or pass -n NAMESPACE"
    )]
    JobNotFound {
        /// The name asked for.
        name: String,
        /// The namespace searched.
        namespace: String,
    },

    /// `wait` ran out of time.
    #[error(
        "{kind} {namespace}/{name} is still {phase} after {seconds} s; raise --timeout or look at `provisioner status {name} -n {namespace}`"
    )]
    Timeout {
        /// Kind of the workload.
        kind: String,
        /// Its name.
        name: String,
        /// Its namespace.
        namespace: String,
        /// The last phase seen.
        phase: String,
        /// The timeout.
        seconds: u64,
    },
}

impl Error {
    /// True when the user can fix the cause (bad configuration, input, or a
    /// missing object or CRD): the binaries exit with code 2.
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::Config { .. }
            | Error::Bind(_)
            | Error::MissingNodes { .. }
            | Error::CrdMissing { .. }
            | Error::JobNotFound { .. } => true,
            Error::Labels(e) => e.is_bad_input(),
            Error::Api { source, .. } => matches!(
                &**source,
                kube::Error::Api(r) if matches!(r.code, 401 | 403 | 404 | 409 | 422)
            ),
            Error::Quantity { .. } | Error::Manifest { .. } | Error::Timeout { .. } => false,
        }
    }

    pub(crate) fn api(action: impl Into<String>, source: kube::Error) -> Error {
        Error::Api {
            action: action.into(),
            source: Box::new(source),
        }
    }
}

/// The API server's own message, with a hint for the status codes a user
/// can act on.
fn api_message(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(r) => {
            let mut s = format!("{} ({} {})", r.message, r.code, r.reason);
            match r.code {
                401 => s.push_str("; the credentials in the kubeconfig were refused, log in again"),
                403 => s.push_str(
                    "; the user lacks a permission: see docs/provisioner-cluster.md for the ClusterRole the provisioner needs",
                ),
                _ => {}
            }
            s
        }
        other => other.to_string(),
    }
}

fn list_missing(missing: &[(String, String)]) -> String {
    let mut s = String::new();
    for (i, (server, node)) in missing.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        if server == node {
            s.push_str(node);
        } else {
            let _ = write!(s, "{node} (server {server})");
        }
    }
    s
}
