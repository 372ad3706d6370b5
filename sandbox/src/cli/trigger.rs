//! `storefront-sandbox trigger ACTION ...`: drives a running sandbox from scripts, doing what the
//! real service does on its own (a buyer pays, the platform refunds, time passes, a notification
//! is sent again). Each action is one request to the sandbox's control endpoints; the answer is
//! printed as JSON, and a refused action exits with status 1 and the service's error code.

use std::path::PathBuf;

use serde_json::{Value, json};

/// Usage of the subcommand.
pub const USAGE: &str =
    "usage: storefront-sandbox trigger [--control URL | --ready-file PATH] ACTION ...

Where the sandbox is: --control URL (its control URL, e.g. http://127.0.0.1:8080/_sandbox),
--ready-file PATH (the file written by --ready-file; also names the CA of a --tls sandbox),
else $STOREFRONT_SANDBOX_CONTROL, else http://127.0.0.1:8080/_sandbox. --ca-file PATH trusts
a --tls sandbox's CA when --control is used.

Actions:
  pay ORDER_NO [--channel PAYMENT_NO] [--user USER]
                       the buyer pays (the platform coin needs a logged-in --user)
  session ORDER_NO [--channel PAYMENT_NO] [--user USER]
                       the buyer opens a channel session without paying yet
  unclear ORDER_NO     the channel's answer becomes unclear (the payment stays pending)
  review ORDER_NO      the platform puts the payment under review
  paid ORDER_NO        the platform confirms the payment (also late, after review or expiry)
  refund ORDER_NO      the platform refunds a paid payment
  chargeback ORDER_NO  a paid payment is charged back
  expire ORDER_NO      the clock moves to the payment's expires_at and it expires
  advance SECONDS      the sandbox clock moves forward; due retries and expiries run
  redeliver ORDER_NO EVENT_ID
                       the stored notification is sent again now, signed afresh
  delivery pause|resume
                       stops or resumes notification delivery (events keep being stored)";

/// One control request.
struct Request {
    method: reqwest::Method,
    path: Vec<String>,
    body: Option<Value>,
}

/// Runs the subcommand with the arguments after `trigger`; returns the process exit status.
pub async fn run(args: Vec<String>) -> i32 {
    let (control, ca_file, request) = match parse(args) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("{message}");
            return 2;
        }
    };
    let secrets = super::redact::secrets_of(&control);
    match send(&control, ca_file.as_deref(), request).await {
        Ok(answer) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&answer).unwrap_or_default()
            );
            0
        }
        Err(message) => {
            // Messages name the URL redacted; scrubbing catches any library text quoting it.
            let message = super::redact::scrub(&message, &secrets);
            eprintln!("storefront-sandbox trigger: {message}");
            1
        }
    }
}

/// The control URL, the CA file to trust (an HTTPS sandbox), and the request.
type Parsed = (url::Url, Option<PathBuf>, Request);

fn parse(args: Vec<String>) -> Result<Parsed, String> {
    let mut control: Option<String> = None;
    let mut ca_file: Option<PathBuf> = None;
    let mut ready_file: Option<PathBuf> = None;
    let mut channel: Option<String> = None;
    let mut user: Option<String> = None;
    let mut words = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--control" => control = Some(value("--control")?),
            "--ready-file" => ready_file = Some(PathBuf::from(value("--ready-file")?)),
            "--ca-file" => ca_file = Some(PathBuf::from(value("--ca-file")?)),
            "--channel" => channel = Some(value("--channel")?),
            "--user" => user = Some(value("--user")?),
            "-h" | "--help" => return Err(USAGE.to_owned()),
            flag if flag.starts_with("--") => {
                return Err(format!("unknown option {flag}\n\n{USAGE}"));
            }
            _ => words.push(arg),
        }
    }
    let control = match (control, ready_file) {
        (Some(url), _) => url,
        (None, Some(path)) => {
            let (url, ca) = from_ready_file(&path)?;
            ca_file = ca_file.or(ca);
            url
        }
        (None, None) => std::env::var("STOREFRONT_SANDBOX_CONTROL")
            .unwrap_or_else(|_| "http://127.0.0.1:8080/_sandbox".to_owned()),
    };
    let control = url::Url::parse(&control)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
        .ok_or_else(|| {
            format!(
                "the control URL {:?} is not an http(s) URL",
                super::redact::text(&control)
            )
        })?;
    let buyer = || {
        let mut body = serde_json::Map::new();
        if let Some(c) = &channel {
            body.insert("payment_no".into(), json!(c));
        }
        if let Some(u) = &user {
            body.insert("user".into(), json!(u));
        }
        Some(Value::Object(body))
    };
    let payment = |action: &str| -> Vec<String> {
        let order_no = words.get(1).cloned().unwrap_or_default();
        vec!["merchant-payments".into(), order_no, action.into()]
    };
    let need = |count: usize, shape: &str| {
        if words.len() == count {
            Ok(())
        } else {
            Err(format!("usage: trigger {shape}\n\n{USAGE}"))
        }
    };
    let post = reqwest::Method::POST;
    let force = |status: &str| Request {
        method: reqwest::Method::POST,
        path: payment("force"),
        body: Some(json!({ "status": status })),
    };
    let action = words.first().map(String::as_str).unwrap_or("");
    let request = match action {
        "pay" | "session" => {
            need(
                2,
                &format!("{action} ORDER_NO [--channel PAYMENT_NO] [--user USER]"),
            )?;
            let mut path = payment("checkout");
            path.push(action.to_owned());
            Request {
                method: post,
                path,
                body: buyer(),
            }
        }
        "unclear" => {
            need(2, "unclear ORDER_NO")?;
            let mut path = payment("checkout");
            path.push("unclear".into());
            Request {
                method: post,
                path,
                body: None,
            }
        }
        "review" | "paid" | "chargeback" => {
            need(2, &format!("{action} ORDER_NO"))?;
            force(action)
        }
        "refund" => {
            need(2, "refund ORDER_NO")?;
            force("refunded")
        }
        "expire" => {
            need(2, "expire ORDER_NO")?;
            Request {
                method: post,
                path: payment("expire"),
                body: None,
            }
        }
        "advance" => {
            need(2, "advance SECONDS")?;
            let seconds: i64 = words[1]
                .parse()
                .ok()
                .filter(|s| *s > 0)
                .ok_or("advance takes a positive whole number of seconds")?;
            Request {
                method: post,
                path: vec!["clock".into(), "advance".into()],
                body: Some(json!({ "seconds": seconds })),
            }
        }
        "redeliver" => {
            need(3, "redeliver ORDER_NO EVENT_ID")?;
            Request {
                method: post,
                path: vec![
                    "merchant-payments".into(),
                    words[1].clone(),
                    "notifications".into(),
                    words[2].clone(),
                    "redeliver".into(),
                ],
                body: None,
            }
        }
        "delivery" => {
            need(2, "delivery pause|resume")?;
            let enabled = match words[1].as_str() {
                "pause" => false,
                "resume" => true,
                _ => return Err(format!("usage: trigger delivery pause|resume\n\n{USAGE}")),
            };
            Request {
                method: reqwest::Method::PUT,
                path: vec!["notifications".into(), "worker".into()],
                body: Some(json!({ "enabled": enabled })),
            }
        }
        "" => return Err(USAGE.to_owned()),
        other => return Err(format!("unknown action {other}\n\n{USAGE}")),
    };
    Ok((control, ca_file, request))
}

fn from_ready_file(path: &std::path::Path) -> Result<(String, Option<PathBuf>), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the ready file {}: {e}", path.display()))?;
    let ready: Value = serde_json::from_str(&text)
        .map_err(|e| format!("the ready file {} is not JSON: {e}", path.display()))?;
    let control = ready["control_url"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("the ready file {} has no control_url", path.display()))?;
    Ok((control, ready["ca_pem_path"].as_str().map(PathBuf::from)))
}

/// An HTTP client trusting the sandbox's CA (when given) or the platform's roots.
fn http_client(ca_file: Option<&std::path::Path>) -> Result<reqwest::Client, String> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?;
    let tls = match ca_file {
        Some(path) => {
            let pem = std::fs::read(path)
                .map_err(|e| format!("cannot read the CA file {}: {e}", path.display()))?;
            let mut roots = rustls::RootCertStore::empty();
            for cert in rustls::pki_types::pem::PemObject::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| format!("the CA file does not parse: {e}"))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("the CA file is not a usable root: {e}"))?;
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        None => builder
            .with_platform_verifier()
            .map_err(|e| format!("TLS setup failed: {e}"))?
            .with_no_client_auth(),
    };
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .timeout(std::time::Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {e}"))
}

async fn send(
    control: &url::Url,
    ca_file: Option<&std::path::Path>,
    request: Request,
) -> Result<Value, String> {
    let mut url = control.clone();
    url.path_segments_mut()
        .map_err(|()| "the control URL cannot take a path".to_owned())?
        .pop_if_empty()
        .extend(&request.path);
    let client = http_client(ca_file)?;
    let mut builder = client.request(request.method, url.clone());
    if let Some(body) = &request.body {
        builder = builder.json(body);
    }
    let shown = super::redact::url(control);
    let response = builder
        .send()
        .await
        .map_err(|e| format!("the sandbox at {shown} did not answer ({})", describe(e)))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|e| format!("reading the answer failed: {}", describe(e)))?;
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    if status.is_success() {
        Ok(body)
    } else {
        let code = body["error"].as_str().unwrap_or("unexpected answer");
        let detail = body["error_description"].as_str().unwrap_or("");
        Err(format!("HTTP {} {code}: {detail}", status.as_u16()))
    }
}

/// An HTTP error without its URL (which may carry a password), with its causes.
fn describe(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(&error);
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(words: &[&str]) -> Result<Parsed, String> {
        parse(words.iter().map(|w| w.to_string()).collect())
    }

    #[test]
    fn actions_map_to_control_requests() {
        let (control, _, r) =
            parsed(&["--control", "http://127.0.0.1:9/_sandbox", "refund", "o 1"]).unwrap();
        assert_eq!(control.as_str(), "http://127.0.0.1:9/_sandbox");
        assert_eq!(r.path, ["merchant-payments", "o 1", "force"]);
        assert_eq!(r.body, Some(json!({"status": "refunded"})));
        let (_, _, r) = parsed(&["pay", "o1", "--user", "alice", "--channel", "pc"]).unwrap();
        assert_eq!(r.path, ["merchant-payments", "o1", "checkout", "pay"]);
        assert_eq!(r.body, Some(json!({"payment_no": "pc", "user": "alice"})));
        let (_, _, r) = parsed(&["delivery", "pause"]).unwrap();
        assert_eq!(r.method, reqwest::Method::PUT);
        assert_eq!(r.body, Some(json!({"enabled": false})));
    }

    #[test]
    fn bad_input_is_refused_with_usage() {
        assert!(parsed(&[]).is_err());
        assert!(parsed(&["refund"]).is_err());
        assert!(parsed(&["advance", "-5"]).is_err());
        assert!(parsed(&["advance", "ten"]).is_err());
        assert!(parsed(&["fly", "o1"]).is_err());
        assert!(parsed(&["--control", "ftp://x/_sandbox", "advance", "1"]).is_err());
        assert!(parsed(&["redeliver", "o1"]).is_err());
    }
}
