//! The job secret that authenticates every connection of a run: an HMAC-SHA256 challenge-response on the hello, in both directions, so that a rank knows its peer holds the same secret and the secret never travels.
//!
//! The connecting side sends its hello with a fresh 32-byte nonce; the
//! accepting side answers with its own nonce and its proof,
//! `HMAC(secret, "eflops-probe accept" | client nonce | server nonce |
//! hello)`; the connecting side checks it and answers with
//! `HMAC(secret, "eflops-probe connect" | server nonce | client nonce |
//! hello)`. The labels keep one side's proof from serving as the other's;
//! the nonces make every proof good for one connection only; the hello
//! bytes bind the proofs to what the peer claimed (its rank, address and
//! settings). HMAC is RFC 2104 with SHA-256 (FIPS 180-4).

use std::fmt;
use std::io::Read;
use std::path::Path;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Bytes of a nonce and of a proof.
pub const NONCE_BYTES: usize = 32;

/// Fewest bytes a secret may have.
pub const MIN_SECRET: usize = 16;

/// Most bytes a secret (or its file) may have.
pub const MAX_SECRET: usize = 4096;

/// The environment variable that holds the job secret.
pub const ENV: &str = "PROBE_TOKEN";

/// The environment variable that marks a rank of a job submitted with a
/// secret (`provisioner submit` sets it to [`REQUIRED`] in every rank's
/// environment, next to [`ENV`] from the job's Secret): such a rank refuses
/// to run without the secret instead of running unauthenticated.
pub const AUTH_ENV: &str = "EFLOPS_PROBE_AUTH";

/// The value of [`AUTH_ENV`] that requires the secret.
pub const REQUIRED: &str = "required";

/// The job secret. Its `Debug` shows no byte of it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({} bytes)", self.0.len())
    }
}

impl Secret {
    /// A secret from its text (surrounding white space, such as a file's
    /// final newline, is not part of it); `from` names where it came from
    /// in the error, which never shows the text.
    pub fn new(text: &[u8], from: &str) -> Result<Secret, String> {
        let t = text.trim_ascii();
        if t.len() < MIN_SECRET || t.len() > MAX_SECRET {
            return Err(format!(
                "{from}: the job secret has {} bytes; give {MIN_SECRET} to {MAX_SECRET}, the same on every rank",
                t.len()
            ));
        }
        Ok(Secret(t.to_vec()))
    }

    /// Reads the secret from `path`: a regular file of at most
    /// [`MAX_SECRET`] bytes.
    pub fn from_file(path: &Path) -> Result<Secret, String> {
        let name = path.display();
        let meta = std::fs::metadata(path).map_err(|e| format!("{name}: {e}"))?;
        if !meta.is_file() {
            return Err(format!(
                "{name}: not a regular file; give the file that holds the job secret"
            ));
        }
        let mut text = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_SECRET as u64 + 1).read_to_end(&mut text))
            .map_err(|e| format!("{name}: {e}"))?;
        Secret::new(&text, &name.to_string())
    }

    /// A fresh secret: 32 random bytes from the kernel, as 64 hex digits.
    pub fn generate() -> std::io::Result<Secret> {
        let bytes = random::<32>()?;
        Ok(Secret(hex(&bytes).into_bytes()))
    }

    /// The secret as text, for the one place that must store it (the
    /// job's Kubernetes Secret).
    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    fn mac(&self, label: &[u8], first: &[u8], second: &[u8], hello: &[u8]) -> Hmac<Sha256> {
        // HMAC takes a key of any length (RFC 2104, section 2).
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"));
        for part in [label, first, second, hello] {
            m.update(&(part.len() as u64).to_be_bytes());
            m.update(part);
        }
        m
    }

    /// The accepting side's proof for a hello with `client` nonce, answered
    /// with `server` nonce.
    pub fn accept_proof(&self, client: &[u8], server: &[u8], hello: &[u8]) -> Vec<u8> {
        self.mac(ACCEPT, client, server, hello)
            .finalize()
            .into_bytes()
            .to_vec()
    }

    /// The connecting side's proof.
    pub fn connect_proof(&self, client: &[u8], server: &[u8], hello: &[u8]) -> Vec<u8> {
        self.mac(CONNECT, server, client, hello)
            .finalize()
            .into_bytes()
            .to_vec()
    }

    /// Checks the accepting side's proof, in constant time.
    pub fn check_accept(&self, client: &[u8], server: &[u8], hello: &[u8], proof: &[u8]) -> bool {
        self.mac(ACCEPT, client, server, hello)
            .verify_slice(proof)
            .is_ok()
    }

    /// Checks the connecting side's proof, in constant time.
    pub fn check_connect(&self, client: &[u8], server: &[u8], hello: &[u8], proof: &[u8]) -> bool {
        self.mac(CONNECT, server, client, hello)
            .verify_slice(proof)
            .is_ok()
    }
}

const ACCEPT: &[u8] = b"eflops-probe accept";
const CONNECT: &[u8] = b"eflops-probe connect";

/// `N` random bytes from the kernel's generator.
pub fn random<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut out = [0u8; N];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut out)?;
    Ok(out)
}

pub use planner::text::hex;

/// The bytes of lower-case or upper-case hex digits `text`; `None` when it
/// is not hex of an even length.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_matches_rfc_4231() {
        // RFC 4231, test case 2: key "Jefe", data "what do ya want for
        // nothing?" (the crate's HMAC with SHA-256, checked once here).
        let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(b"Jefe").unwrap();
        m.update(b"what do ya want for nothing?");
        assert_eq!(
            hex(&m.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn proofs_bind_the_secret_the_side_the_nonces_and_the_hello() {
        let s = Secret::new(b"0123456789abcdef0123\n", "t").unwrap();
        let other = Secret::new(b"0123456789abcdef0124", "t").unwrap();
        let (c, v, h) = ([1u8; 32], [2u8; 32], b"hello".as_slice());
        let p = s.accept_proof(&c, &v, h);
        assert!(s.check_accept(&c, &v, h, &p));
        assert!(!other.check_accept(&c, &v, h, &p));
        assert!(
            !s.check_connect(&c, &v, h, &p),
            "a side's proof serves the other"
        );
        assert!(!s.check_accept(&v, &c, h, &p));
        assert!(!s.check_accept(&c, &v, b"hellp", &p));
        assert!(!s.check_accept(&c, &v, h, &p[..31]));
        let q = s.connect_proof(&c, &v, h);
        assert!(s.check_connect(&c, &v, h, &q));
        assert!(!s.check_accept(&c, &v, h, &q));
    }

    #[test]
    fn secrets_are_bounded_and_never_shown() {
        assert!(
            Secret::new(b"short", "PROBE_TOKEN")
                .unwrap_err()
                .contains("5 bytes")
        );
        assert!(Secret::new(&[b'x'; 5000], "f").is_err());
        let s = Secret::generate().unwrap();
        assert_eq!(s.expose().len(), 64);
        assert_ne!(s, Secret::generate().unwrap());
        let shown = format!("{s:?}");
        assert_eq!(shown, "Secret(64 bytes)");
        assert_eq!(unhex(&hex(&[0, 255, 16])).unwrap(), [0, 255, 16]);
        assert!(unhex("abc").is_none() && unhex("zz").is_none());
    }
}
