//! The HTTPS side shared by the NVUE and eAPI clients: one reqwest client
//! per device (rustls; the device's `ca_file` when given, else the
//! system's CA roots; basic auth) and the mapping of its failures to [`PushError`].

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::device::{Target, Transport};
use super::error::{PushError, Result};

/// How long one request may take (an NVUE apply is polled, not waited
/// for, so requests are short).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A device's HTTPS endpoint with its credentials.
#[derive(Debug, Clone)]
pub struct Http {
    client: reqwest::Client,
    base: String,
    address: String,
    user: String,
    password: super::Secret,
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
            .pool_max_idle_per_host(2);
        if let Some(ca) = &target.tls.ca_file {
            let pem = std::fs::read(ca).map_err(|e| PushError::Io {
                action: format!("reading ca_file {}", ca.display()),
                source: e,
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
        let client = b.build().map_err(|e| PushError::Transport {
            action: "making the HTTPS client".to_string(),
            source: Box::new(e),
        })?;
        Ok(Http {
            client,
            base: format!("https://{}", target.address),
            address: target.address.clone(),
            user: target.user.clone(),
            password,
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
        let status = resp.status();
        if status == StatusCode::UNAUTHORIZED {
            return Err(PushError::Auth {
                address: self.address.clone(),
                user: self.user.clone(),
            });
        }
        let bytes = resp.bytes().await.map_err(|e| self.error(e, action))?;
        let value = if bytes.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).map_err(|e| PushError::Protocol {
                action: action.to_string(),
                message: format!("HTTP {status} with a body that is not JSON: {e}"),
            })?
        };
        Ok((status, value))
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
