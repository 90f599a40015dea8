use super::*;

/// Image references by github.com/distribution/reference's grammar
/// (v0.5.0 `reference.go`).
#[test]
fn image_references_follow_the_distribution_grammar() {
    let digest = format!("sha256:{}", "a".repeat(64));
    for good in [
        "nccl-tests:2.23".to_string(),
        "registry.example.com/team/train:1.0".to_string(),
        "localhost:5000/a/b_c__d--e.f".to_string(),
        "REG.example.com/img".to_string(),
        "[::1]:5000/img:tag".to_string(),
        format!("img@{digest}"),
        format!("r.io/img:v1@{digest}"),
        format!("a:{}", "t".repeat(128)),
    ] {
        assert_eq!(image_reference_problem(&good), None, "{good}");
    }
    for (bad, why) in [
        ("", "it is empty"),
        ("REG/IMG", "lower case only"),
        ("reg/IMG:1", "lower case only"),
        ("registry.example.com/Team/img", "lower case only"),
        ("img:", "grammar"),
        ("img:tag:more", "grammar"),
        ("img with space", "white space"),
        ("-img", "grammar"),
        ("img__-x", "grammar"),
        ("img@sha256:abc", "grammar"),
    ] {
        let got = image_reference_problem(bad).unwrap_or_default();
        assert!(got.contains(why), "{bad:?}: {got}");
    }
    assert!(image_reference_problem(&("a:".to_string() + &"t".repeat(129))).is_some());
    let long = format!("r.io/{}", "a".repeat(251));
    assert!(
        image_reference_problem(&long)
            .unwrap()
            .contains("above 255")
    );
}

const GOOD: &str = r#"name = "allreduce-32"
image = "nccl-tests:2.23"
command = ["all_reduce_perf"]
args = ["-b", "8"]
ranks = 32

[resources]
cpu = "8"
memory = "64Gi"
extra = { "rdma/hca" = 1 }

[env]
NCCL_DEBUG = "INFO"
"#;

#[test]
fn the_mpi_launcher_runs_open_mpi_unless_the_file_names_nccl() {
    let mpi = GOOD.replace("ranks = 32", "ranks = 32\nlauncher = \"mpi\"");
    let j = JobSpec::from_toml(&mpi, "j.toml").unwrap();
    assert_eq!(j.engine, Engine::OpenMpi);
    let nccl = mpi.replace(
        "ranks = 32",
        "ranks = 32\nengine = \"nccl\"\nalgorithm = \"ring\"",
    );
    let j = JobSpec::from_toml(&nccl, "j.toml").unwrap();
    assert_eq!((j.engine, j.algorithm), (Engine::Nccl, Algorithm::Ring));
}

/// The hints of the launcher check name the engines each launcher can
/// start from the engine table (a new engine appears in them).
#[test]
fn launcher_hints_name_the_engines_of_the_table() {
    let indexed = GOOD.replace("ranks = 32", "ranks = 32\nengine = \"openmpi\"");
    let e = JobSpec::from_toml(&indexed, "j.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "use launcher = \"mpi\" for Open MPI, or engine = \"probe\", \"nccl\" or \"gloo\""
        ),
        "{e}"
    );
    let mpi = GOOD.replace(
        "ranks = 32",
        "ranks = 32\nlauncher = \"mpi\"\nengine = \"gloo\"",
    );
    let e = JobSpec::from_toml(&mpi, "j.toml").unwrap_err().to_string();
    assert!(
        e.contains("starts openmpi or nccl programs, not gloo; use engine = \"openmpi\" or \"nccl\", or launcher = \"indexed\""),
        "{e}"
    );
    let mpi_hint = e.split("use engine = ").nth(1).unwrap_or_default();
    let mpi_hint = mpi_hint.split(", or launcher").next().unwrap_or_default();
    let indexed_hint = JobSpec::from_toml(&indexed, "j.toml")
        .unwrap_err()
        .to_string();
    let indexed_hint = indexed_hint
        .split("or engine = ")
        .nth(1)
        .unwrap_or_default();
    for engine in Engine::ALL {
        let info = engine.info();
        let named = format!("\"{}\"", info.name);
        assert_eq!(indexed_hint.contains(&named), info.starts_alone, "{named}");
        assert_eq!(mpi_hint.contains(&named), info.mpirun, "{named}");
    }
}

#[test]
fn a_good_file_with_defaults() {
    let j = JobSpec::from_toml(GOOD, "j.toml").unwrap();
    assert_eq!(j.name, "allreduce-32");
    assert_eq!(j.namespace, "default");
    assert_eq!(j.algorithm, Algorithm::Hdrm);
    assert_eq!(j.launcher, Launcher::Indexed);
    assert_eq!(j.engine, Engine::Probe);
    assert_eq!(j.resources.gpu, "nvidia.com/gpu");
    assert_eq!(j.resources.cpu.as_ref().unwrap().times(2), "16");
    assert_eq!(j.resources.memory.as_ref().unwrap().times(3), "192Gi");
    assert_eq!(j.resources.extra["rdma/hca"], 1);
    assert_eq!((j.master_port, j.ssh_port), (29500, 2222));
    assert_eq!(j.rank_check_image(), "nccl-tests:2.23");
}

/// One case per mistake: what to replace in a good file, with what,
/// and what the error must say.
#[test]
fn mistakes_name_file_and_line() {
    let long = "a".repeat(41);
    for (from, to, want) in [
        (
            "ranks = 32",
            "ranks = 32\ncolour = 1",
            "j.toml:6:1: unknown field `colour`",
        ),
        (
            "ranks = 32",
            "ranks = \"32\"",
            "j.toml:5:9: invalid type: string \"32\", expected a whole number",
        ),
        (
            "allreduce-32",
            "AllReduce",
            "j.toml:1: name: `AllReduce` must be 1 to 63 lower-case",
        ),
        (
            "allreduce-32",
            long.as_str(),
            "j.toml:1: name: `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` has 41 characters",
        ),
        (
            "ranks = 32",
            "ranks = 0",
            "j.toml:5: ranks: 0 ranks; use 1 or more",
        ),
        (
            "ranks = 32",
            "ranks = 32\nalgorithm = \"tree\"",
            "j.toml:6: algorithm: `tree` is not an algorithm; use hdrm, hd or ring",
        ),
        (
            "ranks = 32",
            "ranks = 32\nlauncher = \"slurm\"",
            "j.toml:6: launcher: `slurm` is not a launcher",
        ),
        (
            "command = [\"all_reduce_perf\"]",
            "command = [\"/usr/local/bin/torchrun\", \"--nproc_per_node=8\", \"train.py\"]",
            "j.toml:3: command: `/usr/local/bin/torchrun` starts processes of its own",
        ),
        (
            "command = [\"all_reduce_perf\"]",
            "command = [\"python3\", \"-m\", \"torch.distributed.run\", \"train.py\"]",
            "j.toml:3: command: `torch.distributed.run` starts processes of its own",
        ),
        (
            "ranks = 32",
            "ranks = 32\nengine = \"horovod\"",
            "j.toml:6: engine: `horovod` is not an engine; use probe, nccl or gloo",
        ),
        (
            "ranks = 32",
            "ranks = 32\nengine = \"openmpi\"",
            "j.toml:6: engine: the indexed launcher starts the ranks itself, without mpirun, so openmpi cannot run; use launcher = \"mpi\"",
        ),
        (
            "ranks = 32",
            "ranks = 32\nlauncher = \"mpi\"\nengine = \"gloo\"",
            "j.toml:7: engine: the MPI launcher runs Open MPI's mpirun (mpirun.sh), which starts openmpi or nccl programs, not gloo",
        ),
        (
            "ranks = 32",
            "ranks = 32\nengine = \"nccl\"",
            "j.toml:6: engine: nccl runs no halving-doubling (NCCL 2.30 ring",
        ),
        (
            "ranks = 32",
            "ranks = 32\nssh_port = 22",
            "j.toml:6: ssh_port: ssh_port applies to launcher = \"mpi\" only",
        ),
        (
            "ranks = 32",
            "ranks = 32\nlauncher = \"mpi\"\nmaster_port = 1",
            "j.toml:7: master_port: master_port applies to launcher = \"indexed\" only",
        ),
        (
            "\"8\"",
            "\"1.5\"",
            "j.toml:8: resources.cpu: `1.5` is not a whole quantity",
        ),
        (
            "NCCL_DEBUG",
            "CUDA_VISIBLE_DEVICES",
            "j.toml:13: env.CUDA_VISIBLE_DEVICES: CUDA_VISIBLE_DEVICES is set by the provisioner",
        ),
        (
            "[\"all_reduce_perf\"]",
            "[]",
            "j.toml:3: command: the command is empty",
        ),
        (
            "\"rdma/hca\" = 1",
            "\"rdma/hca\" = 0",
            "j.toml:10: resources.extra.rdma/hca: 0 is not a count",
        ),
        (
            "[resources]",
            "[resources]\ngpu = \"Bad Name\"",
            "j.toml:8: resources.gpu: `Bad Name`",
        ),
    ] {
        let text = GOOD.replace(from, to);
        let e = JobSpec::from_toml(&text, "j.toml").unwrap_err().to_string();
        assert!(e.contains(want), "want {want:?} in:\n{e}");
    }
    // Every problem is listed, not only the first.
    let e = JobSpec::from_toml(
        &GOOD
            .replace("allreduce-32", "x_y")
            .replace("ranks = 32", "ranks = -1"),
        "j.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("j.toml: 2 problems in the job file"), "{e}");
}

/// Issue 14: the line scanner found only `key = ` lines under a
/// `[table]` header, so a problem on a dotted key or in an inline
/// table had no line; the parser's spans find every spelling.
#[test]
fn issue14_dotted_keys_and_inline_tables_name_their_line() {
    let head = "name = \"allreduce-32\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 32\n";
    for (tail, want) in [
        (
            "resources.gpu = \"Bad Name\"\n",
            "j.toml:5: resources.gpu: `Bad Name`",
        ),
        (
            "resources.extra.\"rdma/hca\" = -1\n",
            "j.toml:5: resources.extra.rdma/hca: -1 is not a count",
        ),
        (
            "resources = { cpu = \"8\",\n  memory = \"lots\" }\n",
            "j.toml:6: resources.memory: `lots` is not a whole quantity",
        ),
        (
            "[resources]\nextra = { \"a\" = 1, \"rdma/hca\" = 0 }\n",
            "j.toml:6: resources.extra.rdma/hca: 0 is not a count",
        ),
        ("env.\"1X\" = \"v\"\n", "j.toml:5: env.1X: `1X` is not"),
    ] {
        let e = JobSpec::from_toml(&format!("{head}{tail}"), "j.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "want {want:?} in:\n{e}");
    }
}

const DRA: &str = r#"name = "train"
image = "i"
command = ["c"]
ranks = 8
queue = "team-a"

[placement]
mode = "dra"
profile = "nvidia-sriov"
packing = "fill"
nic = { attribute = "resource.kubernetes.io/pciBusID", value = "netdev" }

[pod]
capabilities = ["CAP_SYS_NICE", "IPC_LOCK"]
shm_size = "16Gi"
annotations = { "example.com/team" = "ml" }
tolerations = [{ key = "nvidia.com/gpu", operator = "Exists", effect = "NoSchedule" }]
priority_class_name = "training"
scheduler_name = "default-scheduler"
volumes = [{ name = "data", mount_path = "/data", read_only = true, source = { persistentVolumeClaim = { claimName = "datasets" } } }]
"#;

#[test]
fn placement_pod_and_queue() {
    let j = JobSpec::from_toml(DRA, "j.toml").unwrap();
    assert_eq!(j.queue.as_deref(), Some("team-a"));
    assert_eq!(j.placement.mode, PlacementMode::Dra);
    assert_eq!(j.placement.packing, Packing::Fill);
    let p = &j.placement.profile;
    assert_eq!(p.name, "nvidia-sriov");
    assert_eq!(p.gpu.device_class, "gpu.nvidia.com");
    assert_eq!(p.nic.driver, "sriovnetwork.k8snetworkplumbingwg.io");
    assert_eq!(p.nic.attribute, "resource.kubernetes.io/pciBusID");
    assert_eq!(p.nic.value, crate::jobs::dra::PlanField::Netdev);
    // IPC_LOCK is always added; CAP_ is dropped.
    assert_eq!(j.pod.capabilities, ["SYS_NICE"]);
    assert_eq!(j.pod.shm_size.as_ref().unwrap().times(1), "16Gi");
    assert_eq!(
        j.pod.tolerations,
        [
            serde_json::json!({ "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" })
        ]
    );
    assert_eq!(
        j.pod.volumes[0].source["persistentVolumeClaim"]["claimName"],
        "datasets"
    );
    // Defaults: whole Nodes, no queue, nothing in [pod].
    let g = JobSpec::from_toml(GOOD, "j.toml").unwrap();
    assert_eq!(g.placement.mode, PlacementMode::WholeNode);
    assert_eq!(g.placement.profile.name, crate::jobs::dra::DEFAULT_PROFILE);
    assert_eq!(
        (g.queue.as_ref(), g.pod.clone()),
        (None, PodSettings::default())
    );
}

/// One case per mistake in the DRA file.
#[test]
fn placement_and_pod_mistakes_name_their_line() {
    for (from, to, want) in [
        (
            "mode = \"dra\"",
            "mode = \"gang\"",
            "j.toml:8: placement.mode: `gang` is not a placement mode",
        ),
        (
            "\"nvidia-sriov\"",
            "\"amd\"",
            "j.toml:9: placement.profile: `amd` is not a cluster profile; use nvidia-dranet or nvidia-sriov",
        ),
        (
            "\"fill\"",
            "\"pack\"",
            "j.toml:10: placement.packing: `pack` is not a packing",
        ),
        (
            "value = \"netdev\"",
            "value = \"gpu_index\"",
            "j.toml:11: placement.nic.value: `gpu_index` is not a field of the nic; use nic or netdev",
        ),
        (
            "resource.kubernetes.io/pciBusID",
            "a b",
            "j.toml:11: placement.nic.attribute: `a b` is not a device attribute name",
        ),
        (
            "\"CAP_SYS_NICE\"",
            "\"sys nice\"",
            "j.toml:14: pod.capabilities: `sys nice` is not a Linux capability name",
        ),
        (
            "\"16Gi\"",
            "\"lots\"",
            "j.toml:15: pod.shm_size: `lots` is not a whole quantity",
        ),
        (
            "operator = \"Exists\"",
            "operatr = \"Exists\"",
            "j.toml:17: pod.tolerations: toleration 1: unknown field `operatr`",
        ),
        (
            "persistentVolumeClaim",
            "persistentVolume",
            "j.toml:20: pod.volumes: volume `data`: the source is not one Kubernetes volume source",
        ),
        (
            "mount_path = \"/data\"",
            "mount_path = \"/etc/eflops/x\"",
            "j.toml:20: pod.volumes: volume `data`: mount path `/etc/eflops/x`",
        ),
        (
            "name = \"data\"",
            "name = \"dshm\"",
            "j.toml:20: pod.volumes: volume name `dshm` is taken",
        ),
        (
            "queue = \"team-a\"",
            "queue = \"Team A\"",
            "j.toml:5: queue: `Team A`",
        ),
        (
            "ranks = 8",
            "ranks = 8\nlauncher = \"mpi\"",
            "placement.mode: placement mode dra runs one pod per rank",
        ),
    ] {
        let text = DRA.replace(from, to);
        assert_ne!(text, DRA, "{from}");
        let e = JobSpec::from_toml(&text, "j.toml").unwrap_err().to_string();
        assert!(e.contains(want), "want {want:?} in:\n{e}");
    }
    let e = JobSpec::from_toml(
        &GOOD.replace("[env]", "[placement]\npacking = \"fill\"\n[env]"),
        "j.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("placement.packing: packing applies to mode = \"dra\" only"),
        "{e}"
    );
}

#[test]
fn quantities() {
    assert_eq!(Quantity::parse("500m").unwrap().times(4), "2000m");
    assert_eq!(Quantity::parse("8").unwrap().times(2), "16");
    for bad in ["", "1.5", "8x", "Gi", "-1"] {
        assert!(Quantity::parse(bad).is_none(), "{bad}");
    }
}

/// `[kueue]`: Kueue v0.19's PodSet annotations, and every refusal
/// names its key.
#[test]
fn kueue_topology_keys() {
    let base =
        "name = \"t\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 8\nqueue = \"team-a\"\n[kueue]\n";
    let j = JobSpec::from_toml(
        &format!("{base}required_topology = \"topology.eflops.io/part\"\nslice_topology = \"topology.eflops.io/switch\"\nslice_size = 2\n"),
        "j.toml",
    )
    .unwrap();
    let a = j.kueue.unwrap().annotations();
    assert_eq!(
        a["kueue.x-k8s.io/podset-required-topology"],
        "topology.eflops.io/part"
    );
    assert_eq!(
        a["kueue.x-k8s.io/podset-slice-required-topology"],
        "topology.eflops.io/switch"
    );
    assert_eq!(a["kueue.x-k8s.io/podset-slice-size"], "2");
    let j =
        JobSpec::from_toml(&format!("{base}preferred_topology = \"rack\"\n"), "j.toml").unwrap();
    assert_eq!(
        j.kueue.unwrap().annotations()["kueue.x-k8s.io/podset-preferred-topology"],
        "rack"
    );
    for (tail, want) in [
        ("", "j.toml:6: kueue: [kueue] names no topology level"),
        (
            "required_topology = \"a\"\npreferred_topology = \"b\"\n",
            "j.toml:8: kueue.preferred_topology: both",
        ),
        (
            "required_topology = \"a\"\nslice_size = 2\n",
            "kueue.slice_size: slice_topology and slice_size go together",
        ),
        (
            "required_topology = \"a\"\nslice_topology = \"b\"\nslice_size = 0\n",
            "kueue.slice_size: 0 is not a pod count",
        ),
        (
            "required_topology = \"a b\"\n",
            "j.toml:7: kueue.required_topology: `a b`",
        ),
    ] {
        let e = JobSpec::from_toml(&format!("{base}{tail}"), "j.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "want {want:?} in:\n{e}");
    }
    let e = JobSpec::from_toml(
        &format!("{base}required_topology = \"a\"\n").replace("queue = \"team-a\"\n", ""),
        "j.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("[kueue] needs a queue"), "{e}");
    let e = JobSpec::from_toml(
        &format!("{base}required_topology = \"a\"\n")
            .replace("ranks = 8", "ranks = 8\nlauncher = \"mpi\""),
        "j.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("whole-Node Indexed Jobs only"), "{e}");
}

/// `[failure]`: a DRA job is one JobSet by default, restarted as a
/// whole `restarts` times; bare Pods only when asked; refused where it
/// cannot hold.
#[test]
fn failure_keys() {
    let base =
        "name = \"t\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 4\n[placement]\nmode = \"dra\"\n";
    let spec = |text: &str| JobSpec::from_toml(text, "j.toml").unwrap().failure;
    let jobset = |restarts| FailurePolicy {
        gang: Gang::JobSet,
        restarts,
    };
    assert_eq!(spec(base), jobset(0));
    assert_eq!(spec(&format!("{base}[failure]\nrestarts = 3\n")), jobset(3));
    assert_eq!(
        spec(&format!("{base}[failure]\ngang = \"none\"\n")).gang,
        Gang::None
    );
    // 18 ranks fit one Kueue Workload; more fit as bare Pods.
    let queued =
        |ranks: usize| base.replace("ranks = 4", &format!("ranks = {ranks}\nqueue = \"q\""));
    assert_eq!(spec(&queued(18)), jobset(0));
    assert_eq!(
        spec(&format!("{}[failure]\ngang = \"none\"\n", queued(19))).gang,
        Gang::None
    );
    let err = |text: &str| JobSpec::from_toml(text, "j.toml").unwrap_err().to_string();
    for (text, want) in [
        (
            format!("{base}[failure]\ngang = \"none\"\nrestarts = 1\n"),
            "j.toml:9: failure.restarts: restarts need gang = \"jobset\"",
        ),
        (
            format!("{base}[failure]\nrestarts = -1\n"),
            "j.toml:8: failure.restarts: -1 is not a restart count",
        ),
        (
            format!("{base}[failure]\ngang = \"all\"\n"),
            "j.toml:8: failure.gang: `all` is not a gang failure handling",
        ),
        (
            base.replace("[placement]\nmode = \"dra\"\n", "[failure]\nrestarts = 1\n"),
            "j.toml:6: failure.restarts: [failure] applies to [placement] mode = \"dra\"",
        ),
        (
            base.replace("name = \"t\"", "name = \"1t\""),
            "j.toml:1: name: `1t` starts with a digit",
        ),
        (
            queued(19),
            "j.toml:5: queue: Kueue v0.19 admits a JobSet as one Workload with a PodSet per replicated Job, at most 18",
        ),
    ] {
        assert!(err(&text).contains(want), "{}", err(&text));
    }
}

/// `unit = "server"` with DRA: accepted with the default profile, one
/// JobSet of one Job per server (the Kueue limit is counted in servers by
/// the placement, which knows the GPUs per server); refused with bare Pods
/// and with a profile whose NICs are virtual functions, each naming its
/// line and what to do.
#[test]
fn dra_whole_servers() {
    let base = "name = \"t\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = 64\nqueue = \"q\"\n[placement]\nmode = \"dra\"\nunit = \"server\"\n";
    let spec = JobSpec::from_toml(base, "j.toml").unwrap();
    assert_eq!(spec.placement.unit, Some(Unit::Server));
    assert_eq!(spec.placement.mode, PlacementMode::Dra);
    assert_eq!(spec.failure.gang, Gang::JobSet);
    let err = |text: &str| JobSpec::from_toml(text, "j.toml").unwrap_err().to_string();
    for (text, want) in [
        (
            format!("{base}[failure]\ngang = \"none\"\n"),
            "j.toml:10: failure.gang: unit server runs one pod per server, and bare Pods are counted one per rank",
        ),
        (
            base.replace(
                "mode = \"dra\"",
                "mode = \"dra\"\nprofile = \"nvidia-sriov\"",
            ),
            "j.toml:9: placement.unit: unit server sets each rank's NCCL_IB_HCA to its NIC's RDMA device as the plan names it, and profile nvidia-sriov selects NICs by netdev",
        ),
        (
            format!("{base}[placement.nic]\nvalue = \"netdev\"\n"),
            "j.toml:8: placement.unit: unit server sets each rank's NCCL_IB_HCA",
        ),
    ] {
        assert!(
            err(&text).contains(want),
            "want {want:?} in:\n{}",
            err(&text)
        );
    }
    // Per rank, a queued JobSet still holds at most 18 ranks.
    assert!(err(&base.replace("unit = \"server\"", "unit = \"gpu\"")).contains("at most 18"));
}
