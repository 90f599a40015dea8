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
//! | `googlenet-aux` | 224×224 image | 64 (`googlenet` and two auxiliary heads of a conv and two fc each) | 13,378,280 | 3.2 |
//! | `zfnet` | 224×224 image | 8 (5 conv, 3 fc) | 62,357,608 | 2.3 |
//! | `vgg19` | 224×224 image | 19 (16 conv, 3 fc) | 143,667,240 | 39.3 |
//! | `transformer-base` | 128 source and 128 target tokens | 127 (shared embedding; 6 encoder layers of 8 and 6 decoder layers of 13: attention projections, layer norms, feed-forward) | 63,082,496 | 16.8 |
//! | `gpt2-small` | 1,024 tokens | 75 (2 embeddings, 25 layer norms, 48 linear; LM head tied) | 124,439,808 | 292.9 |
//! | `llama2-7b` | 4,096 tokens | 291 (embedding, 65 RMS norms, 224 linear, LM head) | 6,738,415,616 | 63,023.4 |
//! | `llama2-70b` | 4,096 tokens | 723 (embedding, 161 RMS norms, 560 linear, LM head) | 68,976,648,192 | 607,395.5 |
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
//!
//! The others, each with its source and formula in its function's
//! documentation: `googlenet-aux` is GoogleNet as trained (Szegedy et al.
//! 2015, Section 5, the two auxiliary classifiers), the "about 13 millions"
//! of MG-WFBP Section V; `zfnet` is Zeiler and Fergus 2014, Fig. 3;
//! `vgg19` is VGG configuration E (Simonyan and Zisserman 2015, Table 1);
//! `transformer-base` is the base model of Vaswani et al. 2017 (Table 3,
//! quoted as 65 M); `gpt2-small` is the 124 M GPT-2 (Radford et al. 2019,
//! Table 2, the smallest model, quoted as 117 M there and 124 M in the
//! released weights); `llama2-7b` and `llama2-70b` are Llama 2 (Touvron et
//! al. 2023, Table 1: 7 B and 70 B, 4 k context, grouped-query attention
//! for 70 B) with the shapes of the released `config.json` files.
//!
//! These profiles count a data-parallel replica's work and gradient: a
//! model whose weights, gradients and optimizer state do not fit one GPU
//! (a 7 B model with mixed-precision Adam needs about 16 bytes per
//! parameter, 108 GB) trains with sharding or model parallelism, which
//! `iteration` does not model; its allreduce figure is then the gradient
//! traffic of plain data parallelism.

use super::{Layer, Model, Work};

/// The names `--model` takes for the built-in profiles.
pub const NAMES: [&str; 11] = [
    "resnet50",
    "vgg16",
    "googlenet",
    "bert-base",
    "googlenet-aux",
    "zfnet",
    "vgg19",
    "transformer-base",
    "gpt2-small",
    "llama2-7b",
    "llama2-70b",
];

/// The built-in profile called `name` (case-insensitive; `resnet-50`,
/// `vgg-16` and `bert` are accepted too).
pub fn built_in(name: &str) -> Option<Model> {
    let n = name.trim().to_ascii_lowercase();
    match n.as_str() {
        "resnet50" | "resnet-50" => Some(resnet50()),
        "vgg16" | "vgg-16" => Some(vgg16()),
        "googlenet" | "inception-v1" => Some(googlenet(false)),
        "googlenet-aux" | "googlenet+aux" => Some(googlenet(true)),
        "bert-base" | "bert" | "bert_base" => Some(bert_base()),
        "zfnet" | "zf-net" => Some(zfnet()),
        "vgg19" | "vgg-19" => Some(vgg19()),
        "transformer-base" | "transformer" => Some(transformer_base()),
        "gpt2-small" | "gpt2" | "gpt-2" => Some(gpt2_small()),
        "llama2-7b" | "llama-2-7b" => Some(llama2(LLAMA2_7B)),
        "llama2-70b" | "llama-2-70b" => Some(llama2(LLAMA2_70B)),
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
    vgg(
        "vgg16",
        [
            (224, &[64, 64]),
            (112, &[128, 128]),
            (56, &[256, 256, 256]),
            (28, &[512, 512, 512]),
            (14, &[512, 512, 512]),
        ],
    )
}

/// VGG-19, configuration E of Simonyan and Zisserman (2015), Table 1: 16
/// 3×3 convolutions with biases in five blocks (2, 2, 4, 4, 4) and the
/// three fully connected layers; parameters `Σ 9·cin·cout + cout` plus
/// `inputs·outputs + outputs` per fc, 143,667,240 (the paper's Table 2
/// rounds to 144 M); forward FLOPs `2·9·cin·cout·s²` per convolution plus
/// the ReLU.
fn vgg19() -> Model {
    vgg(
        "vgg19",
        [
            (224, &[64, 64]),
            (112, &[128, 128]),
            (56, &[256, 256, 256, 256]),
            (28, &[512, 512, 512, 512]),
            (14, &[512, 512, 512, 512]),
        ],
    )
}

/// A VGG network: blocks of 3×3 convolutions (output size, widths), each
/// with its ReLU, then fc6 to fc8.
fn vgg(name: &'static str, blocks: [(u64, &[u64]); 5]) -> Model {
    let mut b = Builder::new(name);
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

/// GoogleNet (Inception v1), with the two auxiliary classifiers of
/// Szegedy et al. (2015), Section 5, when `aux`: after inception 4a and 4d,
/// a 5×5 average pool with stride 3 (4×4 output), a 1×1 convolution to 128
/// channels, a fully connected layer of 1,024 and a linear layer to the
/// 1,000 classes, each with biases: `cin·128 + 128 + 2048·1024 + 1024 +
/// 1024·1000 + 1000` parameters (3,188,840 after 4a, 3,190,888 after 4d),
/// 13,378,280 in all, the "about 13 millions" of MG-WFBP Section V. Their
/// layers follow the module they branch from.
fn googlenet(aux: bool) -> Model {
    let mut b = Builder::new(if aux { "googlenet-aux" } else { "googlenet" });
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
        let head = match name {
            "4a" => Some("loss1"),
            "4d" => Some("loss2"),
            _ => None,
        };
        if let (true, Some(head)) = (aux, head) {
            let out = c1 + c3 + c5 + pp;
            b.conv(format!("{head}/conv"), 1, out, 128, 4, true);
            b.fc(format!("{head}/fc"), 4 * 4 * 128, 1024, 1);
            b.fc(format!("{head}/classifier"), 1024, 1000, 1);
        }
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

/// ZFNet, Zeiler and Fergus (2014), Fig. 3: a 224×224 input, conv1 7×7
/// stride 2 to 96 channels (110×110), conv2 5×5 stride 2 to 256 (26×26),
/// conv3 to conv5 3×3 to 384, 384 and 256 (13×13), then fc6 from 6×6×256 to
/// 4,096, fc7 4,096 and fc8 1,000, all with biases. Parameters `k²·cin·cout
/// + cout` per convolution and `inputs·outputs + outputs` per fc:
/// 62,357,608 (the paper gives no total; AlexNet without its two groups,
/// which ZFNet drops, has about 62.4 M). Forward FLOPs `2·k²·cin·cout·s²`
/// per convolution and `2·inputs·outputs` per fc, plus the ReLUs.
fn zfnet() -> Model {
    let mut b = Builder::new("zfnet");
    let convs: [(&str, u64, u64, u64, u64); 5] = [
        ("conv1", 7, 3, 96, 110),
        ("conv2", 5, 96, 256, 26),
        ("conv3", 3, 256, 384, 13),
        ("conv4", 3, 384, 384, 13),
        ("conv5", 3, 384, 256, 13),
    ];
    for (name, k, cin, cout, out) in convs {
        b.conv(name.into(), k, cin, cout, out, true);
        b.extra((cout * out * out) as f64);
    }
    b.fc("fc6".into(), 6 * 6 * 256, 4096, 1);
    b.fc("fc7".into(), 4096, 4096, 1);
    b.fc("fc8".into(), 4096, 1000, 1);
    b.finish()
}

/// Adds a layer norm over `tokens` × `width` (scale and shift: `2·width`
/// parameters; about 8 FLOPs an element).
fn layer_norm(b: &mut Builder, name: String, width: u64, tokens: u64) {
    b.push(name, 2 * width, 8.0 * (tokens * width) as f64);
}

/// One multi-head attention over `q` query and `kv` key tokens of width
/// `d`: four `d × d` projections with biases (`4(d² + d)` parameters),
/// `QKᵀ` and the weighted sum of the values (`2·q·kv·d` FLOPs each) and the
/// softmax (about 5 FLOPs a score).
fn attention(b: &mut Builder, p: &str, d: u64, heads: u64, q: u64, kv: u64) {
    b.fc(format!("{p}.q"), d, d, q);
    b.fc(format!("{p}.k"), d, d, kv);
    b.fc(format!("{p}.v"), d, d, kv);
    b.fc(format!("{p}.out"), d, d, q);
    b.extra((4 * q * kv * d + 5 * heads * q * kv) as f64);
}

/// The Transformer base model of Vaswani et al. (2017), Table 3: d_model
/// 512, d_ff 2,048, 8 heads, 6 encoder and 6 decoder layers (post-norm: a
/// layer norm after each sub-layer), sinusoidal positions (no
/// parameters), one embedding of the shared 37,000-token vocabulary tied
/// with the pre-softmax projection (Section 3.4), at 128 source and 128
/// target tokens. Parameters: `37000·512` for the embedding, `4(d² + d)`
/// per attention, `2·d·d_ff + d_ff + d` per feed-forward and `2d` per layer
/// norm: 63,082,496, against the paper's rounded 65 M. Forward FLOPs:
/// `2·in·out` per linear layer and token, the attention products, and the
/// output projection (`2·512·37000` per target token) charged to the
/// embedding.
fn transformer_base() -> Model {
    const D: u64 = 512;
    const FF: u64 = 2048;
    const HEADS: u64 = 8;
    const VOCAB: u64 = 37_000;
    const S: u64 = 128;
    let mut b = Builder::new("transformer-base");
    b.push(
        "embedding".into(),
        VOCAB * D,
        2.0 * (D * S) as f64 + 2.0 * (D * VOCAB * S) as f64,
    );
    for i in 0..6 {
        let p = format!("encoder.{i}");
        attention(&mut b, &format!("{p}.self_attn"), D, HEADS, S, S);
        layer_norm(&mut b, format!("{p}.norm1"), D, S);
        b.fc(format!("{p}.ff1"), D, FF, S);
        b.extra((FF * S) as f64);
        b.fc(format!("{p}.ff2"), FF, D, S);
        layer_norm(&mut b, format!("{p}.norm2"), D, S);
    }
    for i in 0..6 {
        let p = format!("decoder.{i}");
        attention(&mut b, &format!("{p}.self_attn"), D, HEADS, S, S);
        layer_norm(&mut b, format!("{p}.norm1"), D, S);
        attention(&mut b, &format!("{p}.cross_attn"), D, HEADS, S, S);
        layer_norm(&mut b, format!("{p}.norm2"), D, S);
        b.fc(format!("{p}.ff1"), D, FF, S);
        b.extra((FF * S) as f64);
        b.fc(format!("{p}.ff2"), FF, D, S);
        layer_norm(&mut b, format!("{p}.norm3"), D, S);
    }
    b.finish()
}

/// A GPT-style decoder, GPT-2 small (Radford et al. 2019, Table 2's
/// smallest model; the released weights): vocabulary 50,257, 1,024
/// positions, 12 pre-norm layers of width 768 with 12 heads, a 3,072-wide
/// MLP, a final layer norm and the LM head tied with the token embedding,
/// at 1,024 tokens. Parameters: `50257·768 + 1024·768` for the embeddings,
/// per layer `2·768` per layer norm, `768·2304 + 2304` (QKV) and
/// `768² + 768` (output) for attention, `2·768·3072 + 3072 + 768` for the
/// MLP: 124,439,808 (Table 2 prints 117 M). Forward FLOPs: `2·in·out` per
/// linear layer and token, causal attention counted in full (`4·S²·d`),
/// and the tied LM head (`2·768·50257` per token) charged to the token
/// embedding.
fn gpt2_small() -> Model {
    const D: u64 = 768;
    const FF: u64 = 3072;
    const HEADS: u64 = 12;
    const VOCAB: u64 = 50_257;
    const S: u64 = 1024;
    let mut b = Builder::new("gpt2-small");
    b.push(
        "wte".into(),
        VOCAB * D,
        (D * S) as f64 + 2.0 * (D * VOCAB * S) as f64,
    );
    b.push("wpe".into(), 1024 * D, (D * S) as f64);
    for i in 0..12 {
        let p = format!("h.{i}");
        layer_norm(&mut b, format!("{p}.ln_1"), D, S);
        b.fc(format!("{p}.attn.c_attn"), D, 3 * D, S);
        b.extra((4 * S * S * D + 5 * HEADS * S * S) as f64);
        b.fc(format!("{p}.attn.c_proj"), D, D, S);
        layer_norm(&mut b, format!("{p}.ln_2"), D, S);
        b.fc(format!("{p}.mlp.c_fc"), D, FF, S);
        b.extra(8.0 * (S * FF) as f64);
        b.fc(format!("{p}.mlp.c_proj"), FF, D, S);
    }
    layer_norm(&mut b, "ln_f".into(), D, S);
    b.finish()
}

/// The shape of a Llama 2 model (the released `config.json`).
struct Llama2 {
    name: &'static str,
    /// `hidden_size`.
    d: u64,
    /// `num_hidden_layers`.
    layers: u64,
    /// `num_attention_heads`.
    heads: u64,
    /// `num_key_value_heads` (grouped-query attention when fewer).
    kv_heads: u64,
    /// `intermediate_size` of the SwiGLU MLP.
    ff: u64,
    /// `vocab_size`.
    vocab: u64,
    /// `max_position_embeddings`: the 4,096-token context of Table 1.
    tokens: u64,
}

/// Llama-2-7b: hidden 4,096, 32 layers of 32 heads, MLP 11,008.
const LLAMA2_7B: Llama2 = Llama2 {
    name: "llama2-7b",
    d: 4096,
    layers: 32,
    heads: 32,
    kv_heads: 32,
    ff: 11_008,
    vocab: 32_000,
    tokens: 4096,
};

/// Llama-2-70b: hidden 8,192, 80 layers of 64 query heads sharing 8
/// key-value heads, MLP 28,672.
const LLAMA2_70B: Llama2 = Llama2 {
    name: "llama2-70b",
    d: 8192,
    layers: 80,
    heads: 64,
    kv_heads: 8,
    ff: 28_672,
    vocab: 32_000,
    tokens: 4096,
};

/// A Llama 2 decoder (Touvron et al. 2023; the released weights'
/// `config.json`): a token embedding, per layer an RMS norm (`d` weights,
/// no bias), the query, key, value and output projections without biases
/// (`d·d`, `d·kv`, `d·kv`, `d·d`, kv = `d / heads · kv_heads`), an RMS
/// norm and the SwiGLU MLP (gate and up `d·ff`, down `ff·d`), then a final
/// RMS norm and an untied LM head (`d·vocab`). That gives 6,738,415,616
/// parameters for 7 B and 68,976,648,192 for 70 B, the released
/// checkpoints' totals. Forward FLOPs per sequence of 4,096 tokens:
/// `2·in·out` per linear layer and token; attention counted in full
/// (`4·S²·d` for `QKᵀ` and the weighted values, about 5 FLOPs a score for
/// the softmax) though causal; rotary embeddings 3 FLOPs per query and
/// key element; SwiGLU 6 FLOPs per MLP element (SiLU and the gate
/// product); an RMS norm 4 per element; the embedding one per element.
fn llama2(shape: Llama2) -> Model {
    let Llama2 {
        name,
        d,
        layers,
        heads,
        kv_heads,
        ff,
        vocab,
        tokens: s,
    } = shape;
    let kv = d / heads * kv_heads;
    let mut b = Builder::new(name);
    let linear = |b: &mut Builder, name: String, inputs: u64, outputs: u64| {
        b.push(name, inputs * outputs, 2.0 * (inputs * outputs * s) as f64);
    };
    let rms_norm = |b: &mut Builder, name: String| b.push(name, d, 4.0 * (d * s) as f64);
    b.push("embed_tokens".into(), vocab * d, (d * s) as f64);
    for i in 0..layers {
        let p = format!("layers.{i}");
        rms_norm(&mut b, format!("{p}.input_layernorm"));
        linear(&mut b, format!("{p}.self_attn.q_proj"), d, d);
        linear(&mut b, format!("{p}.self_attn.k_proj"), d, kv);
        linear(&mut b, format!("{p}.self_attn.v_proj"), d, kv);
        b.extra((3 * s * (d + kv) + 4 * s * s * d + 5 * heads * s * s) as f64);
        linear(&mut b, format!("{p}.self_attn.o_proj"), d, d);
        rms_norm(&mut b, format!("{p}.post_attention_layernorm"));
        linear(&mut b, format!("{p}.mlp.gate_proj"), d, ff);
        linear(&mut b, format!("{p}.mlp.up_proj"), d, ff);
        b.extra(6.0 * (s * ff) as f64);
        linear(&mut b, format!("{p}.mlp.down_proj"), ff, d);
    }
    rms_norm(&mut b, "norm".into());
    linear(&mut b, "lm_head".into(), d, vocab);
    b.finish()
}
