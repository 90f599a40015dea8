//! The HTTPS side shared by the NVUE and eAPI clients: one reqwest client
//! per device (rustls; the device's `ca_file` when given, else the
//! system's CA roots; basic auth) and the mapping of its failures to [`PushError`].

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::device::{Target, Transport};
use super::error::{PushError, Result};

/// How long one request may take (an NVUE apply is polled, not waited
/// for, so requests are short).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer read from a device (NVIDIA warns that whole
/// interface trees of large switches are big; far below what would
/// exhaust memory): a longer body is refused, not buffered.
pub const MAX_BODY: usize = 32 * 1024 * 1024;

/// A device's HTTPS endpoint with its credentials.
#[derive(Debug, Clone)]
pub struct Http {
    client: reqwest::Client,
    base: String,
    address: String,
    user: String,
    password: super::Secret,
    /// The address the device answered from (the management address
    /// push must not cut).
    peer: Arc<Mutex<Option<IpAddr>>>,
}

impl Http {
    /// The client of `target` (transport https).
    pub fn new(target: &Target) -> Result<Http> {
        if target.transport != Transport::Https {
            return Err(PushError::Parameter {
                parameter: "devices".to_string(),
                message: format!(
                    "switch {}: vendor {} needs transport https",
                    target.switch, target.vendor
                ),
            });
        }
        let password = target
            .password
            .clone()
            .ok_or_else(|| PushError::Credentials {
                switch: target.switch.clone(),
                message: "no password source".to_string(),
            })?;
        let mut b = reqwest::Client::builder()
            .use_rustls_tls()
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .pool_max_idle_per_host(2)
            // A redirect could send the request, credentials and
            // candidate elsewhere or over plain HTTP: never followed.
            .redirect(reqwest::redirect::Policy::none());
        if let Some(ca) = &target.tls.ca_file {
            let pem = planner::input::read(ca)
                .map(String::into_bytes)
                .map_err(|e| PushError::Io {
                    action: format!("reading ca_file {}", ca.display()),
                    source: std::io::Error::other(e),
                })?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                PushError::Credentials {
                    switch: target.switch.clone(),
                    message: format!("ca_file {} holds no PEM certificate: {e}", ca.display()),
                }
            })?;
            // The device's CA only: a switch's management certificate is
            // signed by the operator's CA, not a public one (and loading
            // the system's roots for each of many devices is slow).
            b = b.tls_built_in_root_certs(false);
            for c in certs {
                b = b.add_root_certificate(c);
            }
        }
        if !target.tls.verify {
            b = b.danger_accept_invalid_certs(true);
        }
        // A certificate issued for a name while the devices file gives an
        // IP: the URL carries the name (SNI and the certificate check use
        // it) and the name resolves to the address, nowhere else.
        let base = match &target.tls.server_name {
            Some(name) => {
                let addr: std::net::SocketAddr =
                    target.address.parse().map_err(|_| PushError::Parameter {
                        parameter: "devices".to_string(),
                        message: format!(
                            "switch {}: with tls_server_name, address must be IP:port, not {}",
                            target.switch,
                            planner::names::escape(&target.address)
                        ),
                    })?;
                b = b.resolve(name, addr);
                format!("https://{name}:{}", addr.port())
            }
            None => format!("https://{}", target.address),
        };
        let client = b.build().map_err(|e| PushError::Transport {
            action: "making the HTTPS client".to_string(),
            source: Box::new(e),
        })?;
        Ok(Http {
            client,
            base,
            address: target.address.clone(),
            user: target.user.clone(),
            password,
            peer: Arc::new(Mutex::new(None)),
        })
    }

    /// Sends a request with a JSON body (or none) and returns the status
    /// and the JSON answer (`Null` for an empty body). 401 is
    /// [`PushError::Auth`]; a failed connection is
    /// [`PushError::Unreachable`] (before any answer) or
    /// [`PushError::Transport`].
    pub async fn send(
        &self,
        method: Method,
        path_and_query: &str,
        body: Option<&Value>,
        action: &str,
    ) -> Result<(StatusCode, Value)> {
        let mut req = self
            .client
            .request(method, format!("{}{}", self.base, path_and_query))
            .basic_auth(&self.user, Some(self.password.expose()));
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req.send().await.map_err(|e| self.error(e, action))?;
        if let (Some(a), Ok(mut p)) = (resp.remote_addr(), self.peer.lock()) {
            *p = Some(a.ip());
        }
        let status = resp.status();
        if status == StatusCode::UNAUTHORIZED {
            return Err(PushError::Auth {
                address: self.address.clone(),
                user: self.user.clone(),
            });
        }
        if status.is_redirection() {
            let to = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .map_or_else(|| "nowhere".to_string(), |l| self.redact(l));
            return Err(PushError::Protocol {
                action: action.to_string(),
                message: format!(
                    "HTTP {status} redirecting to {to}; push follows no redirect (give the device's own address in the devices file)",
                    to = planner::names::escape(&to)
                ),
            });
        }
        if resp.content_length().is_some_and(|n| n > MAX_BODY as u64) {
            return Err(self.too_long(action));
        }
        let mut resp = resp;
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.error(e, action))? {
            if bytes.len() + chunk.len() > MAX_BODY {
                return Err(self.too_long(action));
            }
            bytes.extend_from_slice(&chunk);
        }
        let value = if bytes.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).map_err(|e| PushError::Protocol {
                action: action.to_string(),
                message: format!("HTTP {status} with a body that is not JSON: {e}"),
            })?
        };
        Ok((status, self.redact_value(value)))
    }

    fn too_long(&self, action: &str) -> PushError {
        PushError::Protocol {
            action: action.to_string(),
            message: format!(
                "the answer is longer than {} MiB; refused (a device does not answer this much)",
                MAX_BODY / (1024 * 1024)
            ),
        }
    }

    /// `text` with the credentials blanked: the password and the basic
    /// auth token, as a device echoing a request would repeat them.
    pub fn redact(&self, text: &str) -> String {
        let pw = self.password.expose();
        let token = base64(format!("{}:{pw}", self.user).as_bytes());
        let mut s = text.replace(&token, "***");
        if !pw.is_empty() {
            s = s.replace(pw, "***");
        }
        s
    }

    /// Every string of `v` redacted, and escaped so that it prints as
    /// text (no terminal control; line breaks kept for multi-line output).
    fn redact_value(&self, v: Value) -> Value {
        match v {
            Value::String(s) => Value::String(planner::names::escape_lines(&self.redact(&s))),
            Value::Array(a) => Value::Array(a.into_iter().map(|x| self.redact_value(x)).collect()),
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .map(|(k, x)| {
                        (
                            planner::names::escape_lines(&self.redact(&k)),
                            self.redact_value(x),
                        )
                    })
                    .collect(),
            ),
            other => other,
        }
    }

    /// The address the device last answered from; before any answer, the
    /// devices file's address when it is an IP address.
    pub fn peer(&self) -> Option<IpAddr> {
        let seen = self.peer.lock().ok().and_then(|p| *p);
        seen.or_else(|| {
            self.address
                .parse::<std::net::SocketAddr>()
                .ok()
                .map(|a| a.ip())
        })
    }

    /// The devices file's `host:port`.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The user push logs in as.
    pub fn user(&self) -> &str {
        &self.user
    }

    fn error(&self, e: reqwest::Error, action: &str) -> PushError {
        if e.is_timeout() {
            return PushError::Timeout {
                action: action.to_string(),
                seconds: REQUEST_TIMEOUT.as_secs(),
            };
        }
        if e.is_connect() {
            return PushError::Unreachable {
                address: self.address.clone(),
                hint: "check the address in the devices file, that the device's API is enabled, and its certificate (ca_file)".to_string(),
                source: Box::new(e),
            };
        }
        PushError::Transport {
            action: action.to_string(),
            source: Box::new(e),
        }
    }
}

/// Standard base64 with padding (the basic auth token's encoding, RFC
/// 7617).
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_the_standard_one() {
        assert_eq!(base64(b"admin:s3cr3t"), "YWRtaW46czNjcjN0");
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
    }
}
