//! The built-in model profiles, built from the published layer shapes.
//!
//! Every learnable layer (a convolution, a fully connected or linear layer,
//! a normalisation, an embedding) is one layer of the profile, with its
//! parameters and the forward FLOPs of one sample (a multiply-add counts
//! 2). The FLOPs of layers without parameters (activations, pooling,
//! attention's two batched products and softmax) are added to the
//! learnable layer before them. The backward step of a layer is taken as
//! twice its forward FLOPs (the gradients of the input and of the weights).
//!
//! | model | input | learnable layers | parameters | forward GFLOPs per sample |
//! |---|---|---|---|---|
//! | `resnet50` | 224×224 image | 107 (53 conv, 53 batch-norm, 1 fc) | 25,557,032 | 8.2 |
//! | `vgg16` | 224×224 image | 16 (13 conv, 3 fc) | 138,357,544 | 31.0 |
//! | `googlenet` | 224×224 image | 58 (57 conv, 1 fc; no auxiliary heads) | 6,998,552 | 3.2 |
//! | `bert-base` | 128 tokens | 101 (3 embeddings, 25 layer norms, 72 linear, pooler) | 109,482,240 | 22.4 |
//!
//! ResNet-50 is torchvision's (stride in the 3×3 convolution, batch-norm
//! scale and shift learnable, no convolution bias), 25,557,032 parameters.
//! VGG-16 is configuration D with biases, 138,357,544. GoogleNet is the
//! original Inception v1 (5×5 branches, biases, no batch-norm, the
//! auxiliary classifiers left out as they are at inference):
//! 6,998,552; its paper's Table 1 lists rounded per-stage counts that sum
//! to about 6.8 M. BERT-base is the uncased encoder (vocabulary 30,522,
//! 512 positions, 2 segment types, 12 layers of hidden size 768 with 12
//! heads and a 3,072-wide feed-forward, and the pooler; no pre-training
//! heads), 109,482,240, at a sequence length of 128.

use super::{Layer, Model, Work};

/// The names `--model` takes for the built-in profiles.
pub const NAMES: [&str; 4] = ["resnet50", "vgg16", "googlenet", "bert-base"];

/// The built-in profile called `name` (case-insensitive; `resnet-50`,
/// `vgg-16` and `bert` are accepted too).
pub fn built_in(name: &str) -> Option<Model> {
    let n = name.trim().to_ascii_lowercase();
    match n.as_str() {
        "resnet50" | "resnet-50" => Some(resnet50()),
        "vgg16" | "vgg-16" => Some(vgg16()),
        "googlenet" | "inception-v1" => Some(googlenet()),
        "bert-base" | "bert" | "bert_base" => Some(bert_base()),
        _ => None,
    }
}

/// Collects layers with their FLOPs.
struct Builder {
    name: &'static str,
    layers: Vec<Layer>,
}

impl Builder {
    fn new(name: &'static str) -> Self {
        Self {
            name,
            layers: Vec::new(),
        }
    }

    fn push(&mut self, name: String, parameters: u64, flops: f64) {
        self.layers.push(Layer {
            name,
            parameters,
            work: Work::Flops {
                forward: flops,
                backward: 2.0 * flops,
            },
        });
    }

    /// Adds FLOPs of a layer without parameters to the last layer.
    fn extra(&mut self, flops: f64) {
        if let Some(Layer {
            work: Work::Flops { forward, backward },
            ..
        }) = self.layers.last_mut()
        {
            *forward += flops;
            *backward += 2.0 * flops;
        }
    }

    /// A k×k convolution from `cin` to `cout` channels with an `out`×`out`
    /// output.
    fn conv(&mut self, name: String, k: u64, cin: u64, cout: u64, out: u64, bias: bool) {
        let params = k * k * cin * cout + if bias { cout } else { 0 };
        let flops = 2.0 * (k * k * cin * cout * out * out) as f64;
        self.push(name, params, flops);
    }

    /// Batch-norm over `c` channels of `out`×`out` (scale and shift
    /// learnable; normalise, scale and shift: 4 FLOPs an element), with the
    /// ReLU after it when `relu`.
    fn bn(&mut self, name: String, c: u64, out: u64, relu: bool) {
        let elements = (c * out * out) as f64;
        let relu = if relu { elements } else { 0.0 };
        self.push(name, 2 * c, 4.0 * elements + relu);
    }

    /// A fully connected layer with bias, applied `times` times a sample.
    fn fc(&mut self, name: String, inputs: u64, outputs: u64, times: u64) {
        self.push(
            name,
            inputs * outputs + outputs,
            2.0 * (inputs * outputs * times) as f64,
        );
    }

    fn finish(self) -> Model {
        Model {
            name: self.name.to_string(),
            batch: None,
            layers: self.layers,
        }
    }
}

/// ResNet-50 (torchvision): bottleneck stages of 3, 4, 6 and 3 blocks.
fn resnet50() -> Model {
    let mut b = Builder::new("resnet50");
    b.conv("conv1".into(), 7, 3, 64, 112, false);
    b.bn("bn1".into(), 64, 112, true);
    let mut cin = 64;
    let mut size = 56;
    for (stage, (&blocks, &width)) in [3u64, 4, 6, 3]
        .iter()
        .zip(&[64u64, 128, 256, 512])
        .enumerate()
    {
        for block in 0..blocks {
            let stride = if stage > 0 && block == 0 { 2 } else { 1 };
            let out = size / stride;
            let p = format!("layer{}.{block}", stage + 1);
            b.conv(format!("{p}.conv1"), 1, cin, width, size, false);
            b.bn(format!("{p}.bn1"), width, size, true);
            b.conv(format!("{p}.conv2"), 3, width, width, out, false);
            b.bn(format!("{p}.bn2"), width, out, true);
            b.conv(format!("{p}.conv3"), 1, width, 4 * width, out, false);
            b.bn(format!("{p}.bn3"), 4 * width, out, false);
            if block == 0 {
                b.conv(format!("{p}.downsample.0"), 1, cin, 4 * width, out, false);
                b.bn(format!("{p}.downsample.1"), 4 * width, out, false);
            }
            // The residual addition and its ReLU.
            b.extra(2.0 * (4 * width * out * out) as f64);
            cin = 4 * width;
            size = out;
        }
    }
    b.fc("fc".into(), 2048, 1000, 1);
    b.finish()
}

/// VGG-16 (configuration D).
fn vgg16() -> Model {
    let mut b = Builder::new("vgg16");
    let blocks: [(u64, &[u64]); 5] = [
        (224, &[64, 64]),
        (112, &[128, 128]),
        (56, &[256, 256, 256]),
        (28, &[512, 512, 512]),
        (14, &[512, 512, 512]),
    ];
    let mut cin = 3;
    for (i, (size, widths)) in blocks.iter().enumerate() {
        for (j, &w) in widths.iter().enumerate() {
            b.conv(format!("conv{}_{}", i + 1, j + 1), 3, cin, w, *size, true);
            b.extra((w * size * size) as f64);
            cin = w;
        }
    }
    b.fc("fc6".into(), 512 * 7 * 7, 4096, 1);
    b.fc("fc7".into(), 4096, 4096, 1);
    b.fc("fc8".into(), 4096, 1000, 1);
    b.finish()
}

/// GoogleNet (Inception v1) without the auxiliary classifiers.
fn googlenet() -> Model {
    let mut b = Builder::new("googlenet");
    b.conv("conv1/7x7_s2".into(), 7, 3, 64, 112, true);
    b.conv("conv2/3x3_reduce".into(), 1, 64, 64, 56, true);
    b.conv("conv2/3x3".into(), 3, 64, 192, 56, true);
    // Input channels, 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool proj.
    let modules: [(&str, u64, [u64; 7]); 9] = [
        ("3a", 28, [192, 64, 96, 128, 16, 32, 32]),
        ("3b", 28, [256, 128, 128, 192, 32, 96, 64]),
        ("4a", 14, [480, 192, 96, 208, 16, 48, 64]),
        ("4b", 14, [512, 160, 112, 224, 24, 64, 64]),
        ("4c", 14, [512, 128, 128, 256, 24, 64, 64]),
        ("4d", 14, [512, 112, 144, 288, 32, 64, 64]),
        ("4e", 14, [528, 256, 160, 320, 32, 128, 128]),
        ("5a", 7, [832, 256, 160, 320, 32, 128, 128]),
        ("5b", 7, [832, 384, 192, 384, 48, 128, 128]),
    ];
    for (name, s, [cin, c1, r3, c3, r5, c5, pp]) in modules {
        let p = format!("inception_{name}");
        b.conv(format!("{p}/1x1"), 1, cin, c1, s, true);
        b.conv(format!("{p}/3x3_reduce"), 1, cin, r3, s, true);
        b.conv(format!("{p}/3x3"), 3, r3, c3, s, true);
        b.conv(format!("{p}/5x5_reduce"), 1, cin, r5, s, true);
        b.conv(format!("{p}/5x5"), 5, r5, c5, s, true);
        b.conv(format!("{p}/pool_proj"), 1, cin, pp, s, true);
    }
    b.fc("loss3/classifier".into(), 1024, 1000, 1);
    b.finish()
}

/// BERT-base (uncased) at a sequence length of 128.
fn bert_base() -> Model {
    const S: u64 = 128;
    const H: u64 = 768;
    const FF: u64 = 3072;
    const HEADS: u64 = 12;
    let mut b = Builder::new("bert-base");
    let ln = |b: &mut Builder, name: String| b.push(name, 2 * H, 8.0 * (S * H) as f64);
    b.push(
        "embeddings.word_embeddings".into(),
        30_522 * H,
        (S * H) as f64,
    );
    b.push(
        "embeddings.position_embeddings".into(),
        512 * H,
        (S * H) as f64,
    );
    b.push(
        "embeddings.token_type_embeddings".into(),
        2 * H,
        (S * H) as f64,
    );
    ln(&mut b, "embeddings.LayerNorm".into());
    for i in 0..12 {
        let p = format!("encoder.layer.{i}");
        for m in ["query", "key", "value"] {
            b.fc(format!("{p}.attention.self.{m}"), H, H, S);
        }
        b.fc(format!("{p}.attention.output.dense"), H, H, S);
        // QKᵀ and the weighted sum of the values (2·S²·H each), and the
        // scaled softmax (about 5 FLOPs a score).
        b.extra((4 * S * S * H + 5 * HEADS * S * S) as f64);
        ln(&mut b, format!("{p}.attention.output.LayerNorm"));
        b.fc(format!("{p}.intermediate.dense"), H, FF, S);
        // GELU, about 8 FLOPs an element.
        b.extra(8.0 * (S * FF) as f64);
        b.fc(format!("{p}.output.dense"), FF, H, S);
        ln(&mut b, format!("{p}.output.LayerNorm"));
    }
    b.fc("pooler.dense".into(), H, H, 1);
    b.finish()
}
