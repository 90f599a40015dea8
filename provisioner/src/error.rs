//! The provisioner's one error tree: inputs, placement, manifests and the
//! Kubernetes API, with the errors of the subsystems (`push`, `probe`,
//! `lab`) and of the planner as variants, so that a binary decides its exit
//! code with one call, [`Error::is_bad_input`].
//!
//! Each subsystem keeps its own error enum beside its code; it joins the
//! tree through a `From` impl here, which also turns its parameter error
//! into the planner's [`planner::Error::Parameter`]: the one parameter
//! error that `planner::error::display_chain` names by the binary's flag.

use std::fmt::Write as _;

use planner::Problem;
use planner::names::escape;

/// Errors of the provisioner library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A node map that is not valid TOML.
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        /// The file as the user named it.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },

    /// A node map or plan that cannot be bound to Kubernetes nodes; every
    /// problem is listed with its line when known.
    #[error("{}", list(file, problems))]
    Invalid {
        /// The input's name.
        file: String,
        /// Everything that is wrong.
        problems: Vec<Problem>,
    },

    /// A job file whose values are wrong; every problem is listed with
    /// its line.
    #[error("{}", planner::error::problem_list(file, "job file", problems))]
    Job {
        /// The job file as the user named it.
        file: String,
        /// Everything that is wrong.
        problems: Vec<Problem>,
    },

    /// Not enough free GPUs (sub-nodes, or every GPU of a shared NIC) for
    /// the job: nothing is placed.
    #[error("{}", not_enough(job, file, plan, *ranks, *free, *total, busy))]
    NotEnough {
        /// The job's name.
        job: String,
        /// The job file as the user named it.
        file: String,
        /// The plan file as the user named it.
        plan: String,
        /// Ranks the job needs.
        ranks: usize,
        /// GPUs free for it.
        free: usize,
        /// GPUs in the whole plan.
        total: usize,
        /// Every Node that offers none, and why.
        busy: Vec<String>,
    },

    /// The rank table cannot place the job (from the planner's rank
    /// mapping).
    #[error("placing job {job}: {source}")]
    Placement {
        /// The job's name.
        job: String,
        /// What the rank mapping said.
        #[source]
        source: planner::Error,
    },

    /// A rank table (`ranks.csv` of the job's ConfigMap) that cannot be
    /// read.
    #[error("{file}:{line}: {message}")]
    RankTable {
        /// The file as the user named it.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },

    /// Objects that cannot be built for a placed job.
    #[error("job {job}: {message}")]
    Manifest {
        /// The job's name.
        job: String,
        /// What is wrong and what to do.
        message: String,
    },

    /// A Node whose DRA devices disagree with the plan's inventory.
    #[error("Node {node}: {device}: {message}")]
    DraInventory {
        /// The Node.
        node: String,
        /// The device (driver, pool and name) or the selector that found
        /// none.
        device: String,
        /// What disagrees, and what to do.
        message: String,
    },

    /// A described cluster (`--cluster`) that cannot be read.
    #[error("{file}: {message}")]
    Described {
        /// The file as the user named it.
        file: String,
        /// What is wrong.
        message: String,
    },

    /// The planner's error: the plan cannot give what the job needs (host
    /// configuration), or a parameter of any subsystem (they all come in
    /// as [`planner::Error::Parameter`]).
    #[error(transparent)]
    Plan(#[from] planner::Error),

    /// `provisioner push` (`crate::push`).
    #[error(transparent)]
    Push(crate::push::PushError),

    /// `provisioner probe` (`crate::probe`).
    #[error(transparent)]
    Probe(crate::probe::Error),

    /// `provisioner lab` (`crate::lab`).
    #[error(transparent)]
    Lab(crate::lab::Error),

    /// `provisioner sot` (`crate::sot`).
    #[error(transparent)]
    Sot(#[from] crate::sot::SotError),

    /// A pod that does not sit where the rank table says.
    #[error("rank check failed against the rank table {table}: {message}")]
    RankCheck {
        /// The rank table as the user named it.
        table: String,
        /// Expected against actual, in words.
        message: String,
    },

    /// A CustomResourceDefinition that cannot serve as a schema.
    #[error("{file}: {message}; give the CRD file as its project publishes it")]
    Crd {
        /// The CRD file as the user named it.
        file: String,
        /// What is missing or wrong.
        message: String,
    },

    // The Kubernetes side (`crate::cluster`).
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

    /// The API server refused a Workload API object (`scheduling.k8s.io`)
    /// as invalid (422): a cluster whose feature gates do not serve what
    /// submit wrote.
    #[error(
        "applying {object} in namespace {namespace}: the API server refused it as invalid ({message}); the Workload API objects need {needs}: enable the feature gates GenericWorkload, GangScheduling and TopologyAwareWorkloadScheduling, or set [schedule] workload_api = \"off\" in the job file to submit without them"
    )]
    WorkloadApiInvalid {
        /// The object, e.g. `PodGroup train`.
        object: String,
        /// Its namespace.
        namespace: String,
        /// What the API server said.
        message: String,
        /// What the objects need ([`crate::jobs::manifests::workload::NEEDS`]).
        needs: &'static str,
    },

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
        "{}: {resource} is `{}`, not a whole number of devices; check the device plugin or the pod's resources",
        escape(object),
        escape(value)
    )]
    Quantity {
        /// `Node x` or `Pod ns/x container c`.
        object: String,
        /// The resource name, e.g. `nvidia.com/gpu`.
        resource: String,
        /// The quantity as the API returned it.
        value: String,
    },

    /// An object that cannot be applied as it is.
    #[error("{object}: {message}")]
    BadObject {
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

    /// No Job, MPIJob, JobSet or DRA submission of that name.
    #[error(
        "no Job, MPIJob, JobSet or DRA submission named {name} in namespace {namespace}; list them with `kubectl get jobs,mpijobs,jobsets,configmaps -n {namespace} -l app.kubernetes.io/managed-by=eflops-provisioner` or pass -n NAMESPACE"
    )]
    JobNotFound {
        /// The name asked for.
        name: String,
        /// The namespace searched.
        namespace: String,
    },

    /// Objects of a job's names exist, but this provisioner did not make
    /// them for that job: they are left alone.
    #[error(
        "found {objects} in namespace {namespace}, but without the labels app.kubernetes.io/managed-by=eflops-provisioner and app.kubernetes.io/instance={name}: not made by this provisioner for the job {name}, so left alone; check the name, or use kubectl for objects that are not the provisioner's"
    )]
    NotOurs {
        /// The objects found, e.g. `Job train`.
        objects: String,
        /// The job asked for.
        name: String,
        /// The namespace searched.
        namespace: String,
    },

    /// A watch that failed for good.
    #[error("watching {what}: {message}")]
    Watch {
        /// What was watched.
        what: String,
        /// What the watcher said.
        message: String,
    },

    /// The API server refused the workload, and the job's Secret applied
    /// before it could not be deleted: the refusal, and the Secret to
    /// delete by hand.
    #[error(
        "the workload was refused, and the job secret {secret} in namespace {namespace} could not be deleted ({why}): delete it with `kubectl delete secret {name} -n {namespace}`"
    )]
    Orphaned {
        /// Why the workload was refused.
        #[source]
        refused: Box<Error>,
        /// The Secret, described.
        secret: String,
        /// Its name.
        name: String,
        /// Its namespace.
        namespace: String,
        /// Why the delete failed.
        why: String,
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
    /// A TOML parse error of `text` (named `file`) with its line and
    /// column.
    pub(crate) fn toml_syntax(text: &str, file: &str, e: &toml::de::Error) -> Self {
        // The planner's one TOML mapping (line, column, wording).
        match planner::Error::toml(file, text, e) {
            planner::Error::Syntax {
                file,
                line,
                column,
                message,
            } => Error::Syntax {
                file,
                line,
                column,
                message,
            },
            other => Error::Plan(other),
        }
    }

    /// True for everything caused by the input (exit code 2); false for
    /// failures of the cluster, the network, a device or this program
    /// (exit code 1). The one exit-code rule of the crate: a subsystem's
    /// error answers through its own `is_bad_input`, and a new variant
    /// does not compile until it is sorted here.
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::Plan(e) | Error::Placement { source: e, .. } => e.is_bad_input(),
            Error::Push(e) => e.is_bad_input(),
            Error::Probe(e) => e.is_bad_input(),
            Error::Lab(e) => e.is_bad_input(),
            Error::Sot(e) => e.is_bad_input(),
            Error::Orphaned { refused, .. } => refused.is_bad_input(),
            // The API refused a request the user can fix (credentials,
            // permissions, a missing object, a conflict, an invalid object).
            Error::Api { source, .. } => matches!(
                &**source,
                kube::Error::Api(r) if matches!(r.code, 401 | 403 | 404 | 409 | 422)
            ),
            Error::Syntax { .. }
            | Error::WorkloadApiInvalid { .. }
            | Error::Invalid { .. }
            | Error::Job { .. }
            | Error::NotEnough { .. }
            | Error::RankTable { .. }
            | Error::Manifest { .. }
            | Error::DraInventory { .. }
            | Error::Described { .. }
            | Error::RankCheck { .. }
            | Error::Crd { .. }
            | Error::Config { .. }
            | Error::MissingNodes { .. }
            | Error::CrdMissing { .. }
            | Error::JobNotFound { .. }
            | Error::NotOurs { .. } => true,
            // Failures of the cluster or of this program.
            Error::Quantity { .. }
            | Error::BadObject { .. }
            | Error::Timeout { .. }
            | Error::Watch { .. } => false,
        }
    }

    pub(crate) fn api(action: impl Into<String>, source: kube::Error) -> Error {
        Error::Api {
            action: action.into(),
            source: Box::new(source),
        }
    }
}

impl From<crate::push::PushError> for Error {
    fn from(e: crate::push::PushError) -> Self {
        match e {
            crate::push::PushError::Parameter { parameter, message } => {
                Error::Plan(planner::Error::Parameter { parameter, message })
            }
            e => Error::Push(e),
        }
    }
}

impl From<crate::probe::Error> for Error {
    fn from(e: crate::probe::Error) -> Self {
        match e {
            crate::probe::Error::Parameter { parameter, message } => {
                Error::Plan(planner::Error::Parameter { parameter, message })
            }
            e => Error::Probe(e),
        }
    }
}

impl From<crate::lab::Error> for Error {
    fn from(e: crate::lab::Error) -> Self {
        match e {
            crate::lab::Error::Parameter { parameter, message } => {
                Error::Plan(planner::Error::Parameter { parameter, message })
            }
            e => Error::Lab(e),
        }
    }
}

fn not_enough(
    job: &str,
    file: &str,
    plan: &str,
    ranks: usize,
    free: usize,
    total: usize,
    busy: &[String],
) -> String {
    let more = ranks - free.min(ranks);
    let mut s = format!(
        "job {job} ({file}) needs {ranks} GPUs (one rank each, with its NIC) and only {free} of the plan {} are free: {more} more {} needed; nothing was placed",
        planner::names::Escaped(plan),
        if more == 1 { "is" } else { "are" }
    );
    if ranks > total {
        s.push_str(&format!(
            "\n  the plan has {total} GPUs in all; ask for at most {total} ranks"
        ));
    }
    if !busy.is_empty() {
        s.push_str("\n  Nodes that offer none:");
        for b in busy {
            s.push_str("\n    ");
            s.push_str(b);
        }
        s.push_str(
            "\n  wait for the busy Nodes, uncordon or repair the others, or ask for fewer ranks",
        );
    }
    s
}

fn list(file: &str, problems: &[Problem]) -> String {
    planner::error::problem_list(file, "binding of the plan to Kubernetes nodes", problems)
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The API server's own message, with a hint for the status codes a user
/// can act on.
fn api_message(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(r) => {
            // The server's words, escaped: a proxy or a hostile server
            // may put anything there.
            let mut s = format!("{} ({} {})", escape(&r.message), r.code, escape(&r.reason));
            match r.code {
                401 => s.push_str("; the credentials in the kubeconfig were refused, log in again"),
                403 => s.push_str(
                    "; the user lacks a permission: see docs/provisioner-cluster.md for the ClusterRole the provisioner needs",
                ),
                _ => {}
            }
            s
        }
        other => escape(&other.to_string()),
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

#[cfg(test)]
mod tests;
