//! The REST client of a source of truth: one reqwest client (rustls; the
//! system's CA roots, or only `--ca-file`'s), the token header of the
//! flavour, bounded pagination and response sizes, retries with backoff on
//! 429 and 5xx, and no redirects followed (a redirect would carry the
//! token to another place, and an API answers none to a correct client).

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::{StreamExt as _, TryStreamExt as _};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::error::{Result, SotError};
use crate::push::device::Secret;

/// Which source of truth the server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// Nautobot 2.x/3.x: UUIDs, `Token <key>`, statuses by name.
    Nautobot,
    /// NetBox 4.x: integer ids, `Token` (v1) or `Bearer nbt_...` (v2).
    Netbox,
}

impl Flavor {
    /// `nautobot` or `netbox`.
    pub fn name(self) -> &'static str {
        match self {
            Flavor::Nautobot => "nautobot",
            Flavor::Netbox => "netbox",
        }
    }
}

/// Where the token comes from: a file (first line) or a variable.
#[derive(Debug, Clone)]
pub enum TokenSource {
    /// A file whose first line is the token; refused when others may read it.
    File(PathBuf),
    /// An environment variable.
    Env(String),
}

/// Limits that keep a wrong or hostile server from holding the client.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Objects per page asked for (`?limit=`).
    pub page_size: usize,
    /// Pages followed for one list before giving up.
    pub max_pages: usize,
    /// Bytes of one response body.
    pub max_body: usize,
    /// Tries of one request on 429, 5xx and lost connections.
    pub tries: u32,
    /// The first backoff; doubled each retry.
    pub backoff: Duration,
    /// One request's timeout.
    pub timeout: Duration,
    /// Bulk requests of one kind in flight at once. Each bulk request
    /// touches other objects, and Nautobot's request thread spends much of
    /// its time waiting on its database and cache: overlapping them cuts
    /// the wall time of a push.
    pub concurrency: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            page_size: 500,
            max_pages: 1000,
            max_body: 64 << 20,
            tries: 5,
            backoff: Duration::from_millis(500),
            // A bulk create of cables makes Nautobot trace every path: on
            // a loaded machine 100 cables took over two minutes.
            timeout: Duration::from_secs(900),
            concurrency: 4,
        }
    }
}

/// How to reach the server.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Nautobot or NetBox.
    pub flavor: Flavor,
    /// The base URL (`https://nautobot.example.com`), without `/api`.
    pub url: String,
    /// Where the token comes from.
    pub token: TokenSource,
    /// A PEM bundle that replaces the system's CA roots.
    pub ca_file: Option<PathBuf>,
    /// Limits on pages, sizes and retries.
    pub limits: Limits,
}

/// A connected client.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: Secret,
    flavor: Flavor,
    limits: Limits,
}

/// Reads the token. A file must not be readable by group or others; the
/// token is never part of a message.
pub fn read_token(source: &TokenSource) -> Result<Secret> {
    let text = match source {
        TokenSource::File(p) => {
            let meta = std::fs::metadata(p).map_err(|e| SotError::Token {
                message: format!("cannot read {}: {e}", p.display()),
            })?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt as _;
                if meta.permissions().mode() & 0o077 != 0 {
                    return Err(SotError::Token {
                        message: format!(
                            "{} may be read by others (mode {:o}); chmod 600 it",
                            p.display(),
                            meta.permissions().mode() & 0o777
                        ),
                    });
                }
            }
            let _ = meta;
            planner::input::read(p).map_err(|message| SotError::Token { message })?
        }
        TokenSource::Env(var) => std::env::var(var).map_err(|_| SotError::Token {
            message: format!("${var} is not set; set it or give --token-file"),
        })?,
    };
    let token = text.lines().next().unwrap_or("").trim().to_string();
    let what = match source {
        TokenSource::File(p) => p.display().to_string(),
        TokenSource::Env(v) => format!("${v}"),
    };
    if token.is_empty() {
        return Err(SotError::Token {
            message: format!("{what} is empty"),
        });
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(SotError::Token {
            message: format!("{what} holds characters a token cannot have"),
        });
    }
    Ok(Secret::new(token))
}

impl Client {
    /// A client for `settings`: reads the token and the CA file; contacts
    /// nothing yet.
    pub fn new(settings: &Settings) -> Result<Client> {
        let url = settings.url.trim_end_matches('/');
        let url = url.strip_suffix("/api").unwrap_or(url);
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(SotError::Parameter {
                parameter: "url".to_string(),
                message: format!(
                    "{url} is not an http(s) URL; give e.g. https://nautobot.example.com"
                ),
            });
        }
        let token = read_token(&settings.token)?;
        let mut b = reqwest::Client::builder()
            .use_rustls_tls()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(settings.limits.timeout)
            .connect_timeout(Duration::from_secs(10))
            .pool_max_idle_per_host(4);
        if let Some(ca) = &settings.ca_file {
            b = add_ca(b, ca)?;
        }
        let http = b.build().map_err(|e| SotError::Transport {
            action: "making the HTTP client".to_string(),
            url: url.to_string(),
            message: e.to_string(),
            source: Some(Box::new(e)),
        })?;
        Ok(Client {
            http,
            base: url.to_string(),
            token,
            flavor: settings.flavor,
            limits: settings.limits,
        })
    }

    /// The flavour.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// Bulk requests of one kind sent at once ([`Limits::concurrency`]).
    pub fn concurrency(&self) -> usize {
        self.limits.concurrency.max(1)
    }

    /// The base URL, without `/api`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The full URL of an API path (`/api/dcim/cables/<id>/`).
    pub fn url(&self, path: &str) -> String {
        if path.starts_with("http://") || path.starts_with("https://") {
            path.to_string()
        } else {
            format!("{}{path}", self.base)
        }
    }

    fn auth_header(&self) -> String {
        let t = self.token.expose();
        match self.flavor {
            // NetBox 4.5+ v2 tokens are sent as Bearer; v1 tokens (40 hex)
            // keep the `Token` keyword, as on Nautobot.
            Flavor::Netbox if t.starts_with("nbt_") => format!("Bearer {t}"),
            _ => format!("Token {t}"),
        }
    }

    /// One request with retries: a 429 answer (the server did not take the
    /// request) and a refused connection are retried with doubling backoff
    /// (a `Retry-After` of up to a minute is honoured), and so are 5xx
    /// answers and lost connections of a read ([`reads`]); any other
    /// status is returned with its body. A write is never sent again once
    /// the server may have taken it: a 5xx answer, a lost connection or an
    /// answer the client cannot use (too large, not JSON, broken off) is an
    /// error that says the write may have been applied and to run the push
    /// again, which reads what exists and writes only what is missing
    /// (issue #31).
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        action: &str,
    ) -> Result<(StatusCode, Value)> {
        let (status, _, value) = self
            .request_if_match(method, path, body, None, action)
            .await?;
        Ok((status, value))
    }

    /// [`Client::request`] with an `If-Match` header when given; returns
    /// the answer's `ETag` too.
    pub async fn request_if_match(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        if_match: Option<&str>,
        action: &str,
    ) -> Result<(StatusCode, Option<String>, Value)> {
        let url = self.url(path);
        let read = reads(&method, path);
        let lost = if read { "" } else { WRITE_LOST };
        let mut delay = self.limits.backoff;
        let mut last = String::new();
        for attempt in 1..=self.limits.tries {
            let mut req = self
                .http
                .request(method.clone(), &url)
                .header("Authorization", self.auth_header())
                .header("Accept", "application/json");
            if let Some(b) = body {
                req = req.json(b);
            }
            if let Some(m) = if_match {
                req = req.header("If-Match", m);
            }
            match req.send().await {
                Ok(resp) => {
                    let status = resp.status();
                    if status.is_redirection() {
                        let to = resp
                            .headers()
                            .get("location")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("?")
                            .to_string();
                        return Err(SotError::Api {
                            action: action.to_string(),
                            url,
                            message: format!(
                                "HTTP {status}: redirected to {to}; redirects are not followed (the token would go along): give the final URL with --url"
                            ),
                        });
                    }
                    let retry_after = resp
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(|s| Duration::from_secs(s.min(60)));
                    let etag = resp
                        .headers()
                        .get("etag")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string);
                    let bytes = self.body(resp, &url, action, lost).await?;
                    // An error's body is only shown: a proxy's HTML page
                    // for a 502 is read as its text, and a read is retried.
                    let value = if status.is_success() || status.is_informational() {
                        json_of(&bytes, status).map_err(|message| SotError::Api {
                            action: action.to_string(),
                            url: url.clone(),
                            message: format!("{message}{lost}"),
                        })?
                    } else {
                        json_of(&bytes, status).unwrap_or_else(|_| {
                            json!({"detail": String::from_utf8_lossy(&bytes[..bytes.len().min(200)])})
                        })
                    };
                    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                        return Err(SotError::Auth {
                            url,
                            status: status.as_u16(),
                            detail: detail(&value),
                        });
                    }
                    if status.is_server_error() && !read {
                        return Err(SotError::Api {
                            action: action.to_string(),
                            url,
                            message: format!(
                                "HTTP {status} to a write, not sent again: {}{lost}",
                                detail(&value)
                            ),
                        });
                    }
                    if (status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error())
                        && attempt < self.limits.tries
                    {
                        last = format!("HTTP {status}: {}", detail(&value));
                        tokio::time::sleep(retry_after.unwrap_or(delay)).await;
                        delay *= 2;
                        continue;
                    }
                    return Ok((status, etag, value));
                }
                Err(e) => {
                    // A write that timed out may have been applied: only
                    // a read is sent again then (a refused connection
                    // never reached the server, so any request may be).
                    let safe = read || e.is_connect();
                    let retry = safe
                        && (e.is_connect() || e.is_timeout() || e.is_request())
                        && attempt < self.limits.tries;
                    if retry {
                        last = e.to_string();
                        tokio::time::sleep(delay).await;
                        delay *= 2;
                        continue;
                    }
                    let lost = if e.is_connect() { "" } else { lost };
                    return Err(SotError::Transport {
                        action: action.to_string(),
                        url,
                        message: format!(
                            "no answer after {attempt} tries (check the URL, that the server runs, and its certificate or --ca-file): {e}{lost}"
                        ),
                        source: Some(Box::new(e)),
                    });
                }
            }
        }
        Err(SotError::Api {
            action: action.to_string(),
            url,
            message: format!("gave up after {} tries: {last}", self.limits.tries),
        })
    }

    /// The answer's body, at most [`Limits::max_body`] bytes. `lost` ends
    /// the message of an answer that cannot be read ([`WRITE_LOST`] for a
    /// write's).
    async fn body(
        &self,
        mut resp: reqwest::Response,
        url: &str,
        action: &str,
        lost: &str,
    ) -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(c)) => {
                    if bytes.len() + c.len() > self.limits.max_body {
                        return Err(SotError::Api {
                            action: action.to_string(),
                            url: url.to_string(),
                            message: if lost.is_empty() {
                                format!(
                                    "the answer is larger than {} bytes; ask for smaller pages",
                                    self.limits.max_body
                                )
                            } else {
                                format!(
                                    "the answer is larger than {} bytes{lost}",
                                    self.limits.max_body
                                )
                            },
                        });
                    }
                    bytes.extend_from_slice(&c);
                }
                Ok(None) => break,
                Err(e) => {
                    return Err(SotError::Transport {
                        action: action.to_string(),
                        url: url.to_string(),
                        message: format!("the answer broke off: {e}{lost}"),
                        source: Some(Box::new(e)),
                    });
                }
            }
        }
        Ok(bytes)
    }

    /// A request that must succeed (2xx); anything else is an error with
    /// the server's message.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        action: &str,
    ) -> Result<Value> {
        let (status, value) = self.request(method, path, body, action).await?;
        if !status.is_success() {
            return Err(SotError::Api {
                action: action.to_string(),
                url: self.url(path),
                message: format!("HTTP {status}: {}", detail(&value)),
            });
        }
        Ok(value)
    }

    /// Every object of a list endpoint, following `next` links (on the
    /// same server only) up to the page limit. `query` is appended to
    /// the first page's URL (`depth=1&exclude_m2m=false`).
    pub async fn list(&self, path: &str, query: &str, action: &str) -> Result<Vec<Value>> {
        let sep = if query.is_empty() { "" } else { "&" };
        let mut next = Some(format!(
            "{path}?limit={}{sep}{query}",
            self.limits.page_size
        ));
        let mut out = Vec::new();
        let mut pages = 0;
        while let Some(page) = next.take() {
            pages += 1;
            if pages > self.limits.max_pages {
                return Err(SotError::Api {
                    action: action.to_string(),
                    url: self.url(path),
                    message: format!(
                        "more than {} pages of {}; narrow the query",
                        self.limits.max_pages, self.limits.page_size
                    ),
                });
            }
            let v = self.call(Method::GET, &page, None, action).await?;
            let Some(results) = v.get("results").and_then(Value::as_array) else {
                return Err(SotError::Api {
                    action: action.to_string(),
                    url: self.url(&page),
                    message:
                        "the answer has no `results` list; is this a Nautobot or NetBox API URL?"
                            .to_string(),
                });
            };
            out.extend(results.iter().cloned());
            next = match v.get("next").and_then(Value::as_str) {
                None => None,
                Some(n) if n.starts_with(&self.base) => Some(n.to_string()),
                // A proxy may rewrite the scheme or host of `next`; keep
                // the path and query on our own server.
                Some(n) => Some(path_of(n).ok_or_else(|| SotError::Api {
                    action: action.to_string(),
                    url: self.url(&page),
                    message: format!("`next` is not a URL: {n}"),
                })?),
            };
        }
        Ok(out)
    }

    /// One GraphQL query (`POST /api/graphql/`, Nautobot's GraphQL API)
    /// with its variables; returns its `data`. Errors in the answer (HTTP
    /// 200 with `errors`, as GraphQL servers answer a query they cannot
    /// run) are an error naming the server's messages.
    pub async fn graphql(&self, query: &str, variables: Value, action: &str) -> Result<Value> {
        let body = json!({"query": query, "variables": variables});
        let path = "/api/graphql/";
        let v = self.call(Method::POST, path, Some(&body), action).await?;
        if let Some(errors) = v
            .get("errors")
            .and_then(Value::as_array)
            .filter(|e| !e.is_empty())
        {
            let messages: Vec<String> = errors
                .iter()
                .map(|e| {
                    e.get("message")
                        .and_then(Value::as_str)
                        .map_or_else(|| e.to_string(), str::to_string)
                })
                .collect();
            return Err(SotError::Api {
                action: action.to_string(),
                url: self.url(path),
                message: format!("the GraphQL query failed: {}", messages.join("; ")),
            });
        }
        match v.get("data") {
            Some(d @ Value::Object(_)) => Ok(d.clone()),
            _ => Err(SotError::Api {
                action: action.to_string(),
                url: self.url(path),
                message: "the GraphQL answer has no `data`; is this a Nautobot API URL?"
                    .to_string(),
            }),
        }
    }

    /// The REST URL of an object, as the REST API writes it in `url`
    /// (`<base>/api/dcim/cables/<id>/`): GraphQL answers carry no URL.
    pub fn object_url(&self, endpoint: &str, id: &str) -> String {
        format!("{}{endpoint}{id}/", self.base)
    }

    /// Creates objects with one list POST per batch (bulk create) and
    /// returns them as created, in order.
    pub async fn create(
        &self,
        path: &str,
        objects: &[Value],
        batch: usize,
        action: &str,
    ) -> Result<Vec<Value>> {
        let answers = self
            .in_chunks(Method::POST, path, objects, batch, action)
            .await?;
        let mut out = Vec::with_capacity(objects.len());
        for answer in answers {
            match answer {
                Value::Array(a) => out.extend(a),
                v => out.push(v),
            }
        }
        Ok(out)
    }

    /// Updates objects (each with its `id`) with one list PATCH per batch
    /// (bulk update).
    pub async fn update(
        &self,
        path: &str,
        objects: &[Value],
        batch: usize,
        action: &str,
    ) -> Result<()> {
        self.in_chunks(Method::PATCH, path, objects, batch, action)
            .await?;
        Ok(())
    }

    /// Updates objects one request each, guarded against concurrent edits
    /// with NetBox 4.6's ETags (docs/integrations/rest-api.md, "Concurrent
    /// Update Protection", v4.6.8: a weak `ETag` on single-object answers,
    /// `If-Match` checked on single-object PATCH, a 412 when the object
    /// changed; bulk requests carry none). Each object comes with the
    /// `last_updated` the push read it with and its name (`sw01 9`): first every object is read
    /// alone (its ETag), and one whose `last_updated` moved since is a
    /// concurrent edit before anything is written; then each is patched
    /// with `If-Match`, and a 412 stops the rest. An object served without
    /// an ETag (NetBox before 4.6) is patched without one. A concurrent
    /// edit is [`SotError::Refused`] naming the object's URL and how many
    /// objects were written before it (each whole: a refused PATCH writes
    /// nothing).
    pub async fn update_if_match(
        &self,
        path: &str,
        objects: &[(Value, Option<String>, String)],
        action: &str,
    ) -> Result<usize> {
        let concurrent = |name: &str, url: String, why: String, written: usize| SotError::Refused {
            what: format!(
                "{action}: an object changed under the push (a concurrent edit); {written} object(s) of this step were written before it, each whole, and nothing after"
            ),
            problems: vec![format!("{name} ({url}): {why}; read it, then push again")],
        };
        let path_of_id = |o: &Value| id_of(o).map(|id| format!("{path}{id}/"));
        let reads: Vec<(String, Option<String>, Value)> =
            futures::stream::iter(objects.iter().map(|(o, _, _)| async move {
                let p = path_of_id(o).unwrap_or_default();
                let (status, etag, v) = self
                    .request_if_match(Method::GET, &p, None, None, action)
                    .await?;
                if !status.is_success() {
                    return Err(SotError::Api {
                        action: action.to_string(),
                        url: self.url(&p),
                        message: format!("HTTP {status}: {}", detail(&v)),
                    });
                }
                Ok((p, etag, v))
            }))
            .buffered(self.limits.concurrency.max(1))
            .try_collect()
            .await?;
        for ((_, seen, name), (p, _, now)) in objects.iter().zip(&reads) {
            let now = now.get("last_updated").and_then(Value::as_str);
            if seen.is_some() && seen.as_deref() != now {
                return Err(concurrent(
                    name,
                    self.url(p),
                    format!(
                        "last updated {} now, {} when the push read it",
                        now.unwrap_or("?"),
                        seen.as_deref().unwrap_or("?")
                    ),
                    0,
                ));
            }
        }
        let mut written = 0;
        for ((o, _, name), (p, etag, _)) in objects.iter().zip(&reads) {
            let (status, _, v) = self
                .request_if_match(Method::PATCH, p, Some(o), etag.as_deref(), action)
                .await?;
            if status == StatusCode::PRECONDITION_FAILED {
                return Err(concurrent(
                    name,
                    self.url(p),
                    format!(
                        "HTTP 412 to If-Match {}: it changed after the push read it",
                        etag.as_deref().unwrap_or("")
                    ),
                    written,
                ));
            }
            if !status.is_success() {
                return Err(SotError::Api {
                    action: action.to_string(),
                    url: self.url(p),
                    message: format!("HTTP {status}: {}", detail(&v)),
                });
            }
            written += 1;
        }
        Ok(written)
    }

    /// One list request per `batch` objects (the objects of one bulk write
    /// are distinct, so the requests may overlap), up to
    /// [`Limits::concurrency`] in flight; the answers in order. The first
    /// error stops the rest.
    async fn in_chunks(
        &self,
        method: Method,
        path: &str,
        objects: &[Value],
        batch: usize,
        action: &str,
    ) -> Result<Vec<Value>> {
        let bodies: Vec<Value> = objects
            .chunks(batch.max(1))
            .map(|c| Value::Array(c.to_vec()))
            .collect();
        futures::stream::iter(
            bodies
                .iter()
                .map(|body| self.call(method.clone(), path, Some(body), action)),
        )
        .buffered(self.limits.concurrency.max(1))
        .try_collect()
        .await
    }
}

/// The end of the message of a write whose answer was lost or cannot be
/// used: the server may have applied it, so it is not sent again.
pub const WRITE_LOST: &str = "; the server may have applied the write before its answer was lost: run the push again, which reads what exists and writes only what is missing";

/// Whether a request only reads, and so may be sent again after a 5xx or
/// a lost connection: a GET, or a GraphQL query (Nautobot's GraphQL API
/// takes queries as POST to `/api/graphql/`; this client sends no
/// mutations).
fn reads(method: &Method, path: &str) -> bool {
    *method == Method::GET || path == "/api/graphql/"
}

fn add_ca(b: reqwest::ClientBuilder, ca: &Path) -> Result<reqwest::ClientBuilder> {
    let pem = planner::input::read(ca)
        .map(String::into_bytes)
        .map_err(|message| SotError::Parameter {
            parameter: "ca-file".to_string(),
            message,
        })?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| SotError::Parameter {
        parameter: "ca-file".to_string(),
        message: format!("{} holds no PEM certificate: {e}", ca.display()),
    })?;
    if certs.is_empty() {
        return Err(SotError::Parameter {
            parameter: "ca-file".to_string(),
            message: format!("{} holds no PEM certificate", ca.display()),
        });
    }
    let mut b = b.tls_built_in_root_certs(false);
    for c in certs {
        b = b.add_root_certificate(c);
    }
    Ok(b)
}

/// The JSON of an answer's body (`null` for an empty one), or what is
/// wrong with it.
fn json_of(bytes: &[u8], status: StatusCode) -> std::result::Result<Value, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    serde_json::from_slice(bytes).map_err(|e| {
        format!(
            "HTTP {status} with a body that is not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
        )
    })
}

/// `/api/...?...` of an absolute URL.
fn path_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let i = rest.find('/')?;
    Some(rest[i..].to_string())
}

/// The server's message: `detail`, or the body (validation errors are
/// objects of field -> messages, or lists of them for a bulk request).
pub fn detail(v: &Value) -> String {
    match v.get("detail").and_then(Value::as_str) {
        Some(d) => d.to_string(),
        None => {
            let s = v.to_string();
            if s.chars().count() > 600 {
                format!("{}...", s.chars().take(600).collect::<String>())
            } else {
                s
            }
        }
    }
}

/// The list under `key` of a GraphQL answer (or of one of its objects);
/// empty when missing or `null`.
pub fn list_of<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The REST value of a choice that Nautobot's GraphQL API (graphene-django)
/// answers as an enum name: upper case, `-` as `_`, and `A_` before a
/// leading digit (`A_100GBASE_X_QSFP28` -> `100gbase-x-qsfp28`, `ACCESS`
/// -> `access`, `TAGGED_ALL` -> `tagged-all`). Exact for the interface
/// types and modes the client reads (letters, digits and `-`); `null`
/// stays `null`.
pub fn enum_value(v: &Value) -> Value {
    let Some(s) = v.as_str() else {
        return v.clone();
    };
    let s = match s.strip_prefix("A_") {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => rest,
        _ => s,
    };
    Value::String(s.to_ascii_lowercase().replace('_', "-"))
}

/// A related object's id as the API shows it: `{"id": ...}` (any depth)
/// or a bare id, a UUID on Nautobot and a number on NetBox.
pub fn id_of(v: &Value) -> Option<String> {
    match v {
        Value::Object(o) => o.get("id").and_then(id_text),
        other => id_text(other),
    }
}

fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphql_enum_names_become_rest_values() {
        for (name, value) in [
            ("A_100GBASE_X_QSFP28", "100gbase-x-qsfp28"),
            ("A_1000BASE_T", "1000base-t"),
            ("VIRTUAL", "virtual"),
            ("LAG", "lag"),
            ("ACCESS", "access"),
            ("TAGGED_ALL", "tagged-all"),
        ] {
            assert_eq!(enum_value(&json!(name)), json!(value), "{name}");
        }
        assert_eq!(enum_value(&Value::Null), Value::Null);
    }
}
