//! The GPU models the planner knows: dense BF16/FP16 tensor throughput
//! and memory bandwidth per GPU, each from its vendor's data sheet, and
//! the one rule that reads an inventory's free-text GPU `model`
//! (`H100-SXM5-80GB`, `Tesla V100-PCIe-32GB`) as one of them.
//!
//! Vendors print tensor throughput with 2:4 structured sparsity and mark
//! it (NVIDIA's "* With sparsity"); the figures here are dense, half of
//! those. They are peaks: training sustains a fraction of them, so a
//! measured rate given by the user is always better. docs/iteration.md
//! ("GPU models") lists the same table; a test holds the two equal.

use serde::Serialize;

/// One GPU model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GpuSpec {
    /// The name reports use (`H100 SXM`).
    pub name: &'static str,
    /// Peak dense BF16 (FP16 where the GPU has no BF16) tensor
    /// throughput, TFLOPS.
    pub dense_tflops: f64,
    /// Peak memory bandwidth, TB/s.
    pub memory_tb_s: f64,
    /// Where both figures come from: the vendor's page or data sheet.
    pub source: &'static str,
    /// Words an inventory's model must hold, each inside one of its
    /// upper-cased words (see [`lookup`]).
    #[serde(skip)]
    all: &'static [&'static str],
    /// Words it must not hold (a `GB200` is no `B200`).
    #[serde(skip)]
    none: &'static [&'static str],
}

/// The table, most specific first: the first entry whose words match
/// wins.
pub const GPUS: &[GpuSpec] = &[
    // NVIDIA GB200 NVL72 (https://www.nvidia.com/en-us/data-center/gb200-nvl72/):
    // FP16/BF16 Tensor Core 360 PFLOPS with sparsity and HBM3e 576 TB/s
    // for 72 GPUs: 5,000 TFLOPS sparse, 2,500 dense and 8 TB/s per GPU.
    GpuSpec {
        name: "GB200 (Blackwell GPU)",
        dense_tflops: 2500.0,
        memory_tb_s: 8.0,
        source: "https://www.nvidia.com/en-us/data-center/gb200-nvl72/",
        all: &["GB200"],
        none: &[],
    },
    // NVIDIA HGX B200 (https://www.nvidia.com/en-us/data-center/hgx/):
    // FP16/BF16 Tensor Core 36 PFLOPS with sparsity and 64 TB/s for 8
    // GPUs: 4,500 sparse, 2,250 dense and 8 TB/s per GPU.
    GpuSpec {
        name: "B200",
        dense_tflops: 2250.0,
        memory_tb_s: 8.0,
        source: "https://www.nvidia.com/en-us/data-center/hgx/",
        all: &["B200"],
        none: &["GB200"],
    },
    // NVIDIA H200 (https://www.nvidia.com/en-us/data-center/h200/): H200
    // SXM BF16 Tensor Core 1,979 TFLOPS with sparsity, 4.8 TB/s.
    GpuSpec {
        name: "H200 SXM",
        dense_tflops: 989.5,
        memory_tb_s: 4.8,
        source: "https://www.nvidia.com/en-us/data-center/h200/",
        all: &["H200"],
        none: &["GH200", "NVL"],
    },
    // NVIDIA H100 (https://www.nvidia.com/en-us/data-center/h100/): H100
    // PCIe BF16 Tensor Core 1,513 TFLOPS with sparsity, 2 TB/s.
    GpuSpec {
        name: "H100 PCIe",
        dense_tflops: 756.5,
        memory_tb_s: 2.0,
        source: "https://www.nvidia.com/en-us/data-center/h100/",
        all: &["H100", "PCIE"],
        none: &["GH100", "NVL"],
    },
    // The same page: H100 SXM BF16 Tensor Core 1,979 TFLOPS with
    // sparsity, 3.35 TB/s.
    GpuSpec {
        name: "H100 SXM",
        dense_tflops: 989.5,
        memory_tb_s: 3.35,
        source: "https://www.nvidia.com/en-us/data-center/h100/",
        all: &["H100"],
        none: &["GH100", "NVL", "PCIE"],
    },
    // NVIDIA A100 (https://www.nvidia.com/en-us/data-center/a100/):
    // BFLOAT16 Tensor Core 312 TFLOPS dense (624 with sparsity) for every
    // form; memory bandwidth 1,555 GB/s (40 GB), 1,935 GB/s (80 GB PCIe),
    // 2,039 GB/s (80 GB SXM).
    GpuSpec {
        name: "A100 40GB",
        dense_tflops: 312.0,
        memory_tb_s: 1.555,
        source: "https://www.nvidia.com/en-us/data-center/a100/",
        all: &["A100", "40G"],
        none: &[],
    },
    GpuSpec {
        name: "A100 PCIe 80GB",
        dense_tflops: 312.0,
        memory_tb_s: 1.935,
        source: "https://www.nvidia.com/en-us/data-center/a100/",
        all: &["A100", "PCIE"],
        none: &[],
    },
    GpuSpec {
        name: "A100 SXM 80GB",
        dense_tflops: 312.0,
        memory_tb_s: 2.039,
        source: "https://www.nvidia.com/en-us/data-center/a100/",
        all: &["A100"],
        none: &[],
    },
    // NVIDIA V100 data sheet (https://www.nvidia.com/en-us/data-center/v100/):
    // Tensor Performance 112 TFLOPS (PCIe), 125 TFLOPS (SXM2), FP16 (V100
    // has no BF16) and dense; memory bandwidth 900 GB/s.
    GpuSpec {
        name: "V100 PCIe",
        dense_tflops: 112.0,
        memory_tb_s: 0.9,
        source: "https://www.nvidia.com/en-us/data-center/v100/",
        all: &["V100", "PCIE"],
        none: &["V100S"],
    },
    GpuSpec {
        name: "V100 SXM2",
        dense_tflops: 125.0,
        memory_tb_s: 0.9,
        source: "https://www.nvidia.com/en-us/data-center/v100/",
        all: &["V100"],
        none: &["V100S"],
    },
    // AMD Instinct MI300X
    // (https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html):
    // peak FP16 and BF16 1,307.4 TFLOPS (2,614.9 with structured
    // sparsity), peak memory bandwidth 5.3 TB/s.
    GpuSpec {
        name: "MI300X",
        dense_tflops: 1307.4,
        memory_tb_s: 5.3,
        source: "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html",
        all: &["MI300X"],
        none: &[],
    },
];

/// The table entry an inventory's free-text GPU model names, if any.
/// The model is upper-cased and cut into words at everything but letters
/// and digits; the first entry each of whose words is inside one of the
/// model's, and none of whose excluded words is, wins
/// (`Tesla V100-PCIe-32GB` is a V100 PCIe, `NVIDIA H100 80GB HBM3` an
/// H100 SXM, `GH200` and `V100S-PCIe` nothing).
pub fn lookup(model: &str) -> Option<&'static GpuSpec> {
    let upper = model.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let holds = |w: &str| words.iter().any(|x| x.contains(w));
    GPUS.iter()
        .find(|g| g.all.iter().all(|w| holds(w)) && !g.none.iter().any(|w| holds(w)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `check(model, expect)`: the entry a model names.
    fn check(model: &str, expect: Option<&str>) {
        assert_eq!(lookup(model).map(|g| g.name), expect, "{model}");
    }

    #[test]
    fn inventory_models_name_their_entries() {
        check("H100-SXM5-80GB", Some("H100 SXM"));
        check("NVIDIA H100 80GB HBM3", Some("H100 SXM"));
        check("H100 PCIe", Some("H100 PCIe"));
        check("H100 NVL", None);
        check("GH200", None);
        check("H200", Some("H200 SXM"));
        check("B200", Some("B200"));
        check("GB200", Some("GB200 (Blackwell GPU)"));
        check("A100-SXM4-40GB", Some("A100 40GB"));
        check("A100-PCIE-80GB", Some("A100 PCIe 80GB"));
        check("NVIDIA A100-SXM4-80GB", Some("A100 SXM 80GB"));
        check("Tesla V100-PCIe-32GB", Some("V100 PCIe"));
        check("Tesla V100-SXM2-16GB", Some("V100 SXM2"));
        check("V100S-PCIe", None);
        check("Tesla V100-SXM2-16GB", Some("V100 SXM2"));
        check("TeslaV100", Some("V100 SXM2"));
        check("AMD Instinct MI300X", Some("MI300X"));
        check("GPU", None);
        check("", None);
    }

    /// docs/iteration.md's table has one row per entry, with its name,
    /// figures and source, in the same order.
    #[test]
    fn gpus_doc_table_is_the_code_table() {
        let doc = include_str!("../../docs/iteration.md");
        let rows: Vec<Vec<&str>> = doc
            .lines()
            .skip_while(|l| !l.starts_with("| GPU | dense BF16/FP16 TFLOPS"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
            .collect();
        assert_eq!(rows.len(), GPUS.len(), "{rows:?}");
        for (row, g) in rows.iter().zip(GPUS) {
            assert_eq!(row[0], g.name);
            assert_eq!(row[1].parse::<f64>().unwrap(), g.dense_tflops, "{}", g.name);
            assert_eq!(row[2].parse::<f64>().unwrap(), g.memory_tb_s, "{}", g.name);
            assert!(row[3].starts_with(g.source), "{}: {}", g.name, row[3]);
        }
    }

    #[test]
    fn every_entry_is_sourced_and_reachable() {
        for g in GPUS {
            assert!(g.source.starts_with("https://"), "{}", g.name);
            assert!(g.dense_tflops > 0.0 && g.memory_tb_s > 0.0, "{}", g.name);
            // An earlier entry does not shadow it: its own words find it.
            let words = g.all.join(" ");
            assert_eq!(lookup(&words).map(|f| f.name), Some(g.name), "{words}");
        }
    }
}
