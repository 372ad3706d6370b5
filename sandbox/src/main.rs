//! `storefront-sandbox`: runs the simulator standalone and prints how to reach it.

use std::net::IpAddr;
use std::path::PathBuf;

use storefront_sandbox::clock::DeliveryTimestamp;
use storefront_sandbox::{Sandbox, SandboxOptions, seed};

mod cli {
    pub mod redact;
    pub mod trigger;
}

const USAGE: &str = "usage: storefront-sandbox [--port N] [--host ADDR] [--allow-host NAME[:PORT]] [--tls] [--ready-file PATH] [--env-file PATH] [--notify-to URL]
       storefront-sandbox trigger ACTION ...   (drive a running sandbox; trigger --help)

  --port N           port to listen on (0 = any free port; default 8080)
  --host ADDR        address to listen on (default 127.0.0.1)
  --allow-host NAME[:PORT]
                     also answer requests whose Host is NAME (any port) or NAME:PORT; repeatable.
                     Only 127.0.0.1, localhost, [::1] and the listening address on the sandbox's
                     own port are answered otherwise (421 host_not_served: DNS-rebinding guard)
  --tls              serve HTTPS with a CA generated at start (its PEM is written next to the ready file or to a temp file)
  --ready-file PATH  once listening, write the endpoints as one JSON object to PATH (its \"env\"
                     holds the STOREFRONT_* variables of your app's configuration)
  --env-file PATH    once listening, write those variables as a sourceable file to PATH (mode
                     0600: it holds the sandbox-only client secret): . PATH
  --deny-loopback-notify
                     refuse loopback notification targets at creation and delivery, as the real service does
  --rate-limit-window SECONDS
                     length of the per-client rate-limit windows (default 60, the contract's minute;
                     budgets stay 60/300/30), so a client's pacing can be watched in seconds
  --token-lifetime SECONDS
                     lifetime of client-credentials tokens, the grant's expires_in (default 3600;
                     0 is allowed: expired at once); PUT /_sandbox/token-lifetime changes it later
  --notify-to URL    deliver every payment's notifications (payments created without notify_url)
                     to URL, e.g. http://localhost:8000/webhook (plain HTTP on loopback is allowed);
                     the signing secret is $STOREFRONT_NOTIFY_SECRET, or one is generated and
                     printed once
  --delivery-timestamp wall|sandbox
                     clock of the X-Service-Timestamp header on deliveries (default wall: real
                     time, so receivers keep accepting deliveries after the clock is advanced)";

struct Args {
    options: SandboxOptions,
    ready_file: Option<PathBuf>,
    env_file: Option<PathBuf>,
    notify_to: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut options = SandboxOptions {
        port: 8080,
        ..SandboxOptions::default()
    };
    let mut ready_file = None;
    let mut env_file = None;
    let mut notify_to = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--port" => {
                options.port = value("--port")?
                    .parse()
                    .map_err(|_| "--port takes a number from 0 to 65535".to_string())?
            }
            "--host" => {
                options.host = value("--host")?
                    .parse::<IpAddr>()
                    .map_err(|_| "--host takes an IP address".to_string())?
            }
            "--allow-host" => options.allowed_hosts.push(value("--allow-host")?),
            "--tls" => options.tls = true,
            "--deny-loopback-notify" => options.allow_loopback_notify = false,
            "--rate-limit-window" => {
                options.rate_limit_window_seconds = value("--rate-limit-window")?
                    .parse()
                    .ok()
                    .filter(|s: &u32| *s >= 1)
                    .ok_or_else(|| {
                        "--rate-limit-window takes whole seconds, at least 1".to_string()
                    })?
            }
            "--token-lifetime" => {
                options.token_lifetime_seconds = Some(
                    value("--token-lifetime")?
                        .parse()
                        .ok()
                        .filter(|s: &i64| storefront_sandbox::auth::valid_token_lifetime(*s))
                        .ok_or_else(|| {
                            format!(
                                "--token-lifetime takes whole seconds from 0 to {}",
                                storefront_sandbox::auth::MAX_TOKEN_LIFETIME_SECONDS
                            )
                        })?,
                )
            }
            "--ready-file" => ready_file = Some(PathBuf::from(value("--ready-file")?)),
            "--env-file" => env_file = Some(PathBuf::from(value("--env-file")?)),
            "--notify-to" => notify_to = Some(value("--notify-to")?),
            "--delivery-timestamp" => {
                options.delivery_timestamp =
                    DeliveryTimestamp::parse(&value("--delivery-timestamp")?)
                        .ok_or_else(|| "--delivery-timestamp takes wall or sandbox".to_string())?
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other}\n\n{USAGE}")),
        }
    }
    Ok(Args {
        options,
        ready_file,
        env_file,
        notify_to,
    })
}

#[tokio::main]
async fn main() {
    if std::env::args().nth(1).as_deref() == Some("trigger") {
        let code = cli::trigger::run(std::env::args().skip(2).collect()).await;
        std::process::exit(code);
    }
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let sandbox = match Sandbox::start_with(args.options).await {
        Ok(sandbox) => sandbox,
        Err(error) => {
            eprintln!("storefront-sandbox: cannot start: {error}");
            std::process::exit(1);
        }
    };
    let ca_pem_path = sandbox.ca_pem().map(|pem| {
        let path = match &args.ready_file {
            Some(ready) => ready.with_extension("ca.pem"),
            None => std::env::temp_dir().join(format!(
                "storefront-sandbox-{}.ca.pem",
                sandbox.address().port()
            )),
        };
        if let Err(error) = std::fs::write(&path, pem) {
            eprintln!(
                "storefront-sandbox: cannot write the CA file {}: {error}",
                path.display()
            );
            std::process::exit(1);
        }
        path
    });
    println!("storefront sandbox listening on {}", sandbox.origin());
    println!("  base_url           {}", sandbox.base_url());
    println!("  token_endpoint     {}", sandbox.token_endpoint());
    println!("  userinfo_endpoint  {}", sandbox.userinfo_endpoint());
    println!("  control_url        {}", sandbox.control_url());
    if let Some(path) = &ca_pem_path {
        println!("  CA certificate     {}", path.display());
    }
    println!();
    println!("seeded clients (sandbox-only secrets):");
    println!(
        "  {:<22} {}  merchant {} (all scopes)",
        seed::MERCHANT_CLIENT_ID,
        seed::MERCHANT_CLIENT_SECRET,
        seed::MERCHANT_NO
    );
    println!(
        "  {:<22} {}  merchant {} (no merchant_payments scopes)",
        seed::CATALOG_CLIENT_ID,
        seed::CATALOG_CLIENT_SECRET,
        seed::MERCHANT_NO
    );
    println!(
        "  {:<22} {}  merchant {} (second merchant)",
        seed::OTHER_CLIENT_ID,
        seed::OTHER_CLIENT_SECRET,
        seed::OTHER_MERCHANT_NO
    );
    println!(
        "  {:<22} {}  merchant {} (inactive)",
        seed::INACTIVE_CLIENT_ID,
        seed::INACTIVE_CLIENT_SECRET,
        seed::INACTIVE_MERCHANT_NO
    );
    println!(
        "  {:<22} (public client, no secret)",
        seed::PUBLIC_CLIENT_ID
    );
    println!(
        "seeded users: {}, {}, {} (user tokens: POST {}/users/{{user}}/tokens)",
        seed::USER_ALICE,
        seed::USER_BOB,
        seed::USER_CAROL,
        sandbox.control_url()
    );
    println!(
        "seeded channels: {} (platform coin), {} (card, USD), {} (card test channel, payer {}), {} (card, EUR, merchant {} only)",
        seed::CHANNEL_PLATFORM_COIN,
        seed::CHANNEL_CARD_USD,
        seed::CHANNEL_CARD_TEST,
        seed::USER_ALICE,
        seed::CHANNEL_CARD_EUR_OTHER,
        seed::OTHER_MERCHANT_NO
    );
    println!(
        "control endpoints (clock, buyers paying, faults, request log): see sandbox/README.md"
    );
    println!("dashboard: {}/", sandbox.control_url());
    let env = sandbox.app_env(ca_pem_path.as_deref());
    println!();
    println!(
        "your app's configuration (any language: Config::from_env / Config.from_env / Client::fromEnv / configFromEnv / sf_config_from_env):"
    );
    for (name, value) in &env {
        println!("  export {name}={}", shell_quote(value));
    }
    if let Some(path) = &args.env_file
        && let Err(error) = write_env_file(path, &env)
    {
        eprintln!(
            "storefront-sandbox: cannot write the env file {}: {error}",
            path.display()
        );
        std::process::exit(1);
    }
    if let Some(url) = &args.notify_to {
        let chosen = std::env::var("STOREFRONT_NOTIFY_SECRET").ok();
        let generated = chosen.is_none();
        match sandbox.notify_to(url, chosen) {
            Ok(secret) => {
                println!();
                println!(
                    "notifications: payments created without notify_url (merchants {} and {}) are delivered to {}",
                    seed::MERCHANT_NO,
                    seed::OTHER_MERCHANT_NO,
                    cli::redact::text(url)
                );
                if generated {
                    println!(
                        "  signed with this secret (shown once; give it to your app's webhook verifier):"
                    );
                    println!("  export STOREFRONT_NOTIFY_SECRET={secret}");
                } else {
                    println!("  signed with the secret in $STOREFRONT_NOTIFY_SECRET");
                }
            }
            Err(error) => {
                let secrets = url::Url::parse(url)
                    .map(|u| cli::redact::secrets_of(&u))
                    .unwrap_or_default();
                eprintln!(
                    "storefront-sandbox: --notify-to {}: {} ({})",
                    cli::redact::text(url),
                    cli::redact::scrub(&error.error_description.unwrap_or_default(), &secrets),
                    error.error
                );
                std::process::exit(2);
            }
        }
    }
    if let Some(path) = args.ready_file {
        let ready = serde_json::json!({
            "origin": sandbox.origin(),
            "base_url": sandbox.base_url(),
            "token_endpoint": sandbox.token_endpoint(),
            "userinfo_endpoint": sandbox.userinfo_endpoint(),
            "control_url": sandbox.control_url(),
            "ca_pem_path": ca_pem_path.map(|p| p.display().to_string()),
            "clients": seeded_clients(),
            "users": [seed::USER_ALICE, seed::USER_BOB, seed::USER_CAROL],
            "merchant_no": seed::MERCHANT_NO,
            "other_merchant_no": seed::OTHER_MERCHANT_NO,
            "env": env
                .iter()
                .map(|(name, value)| (name.clone(), serde_json::Value::from(value.as_str())))
                .collect::<serde_json::Map<String, serde_json::Value>>(),
        });
        let partial = path.with_extension("partial");
        let written = std::fs::write(&partial, ready.to_string())
            .and_then(|()| std::fs::rename(&partial, &path));
        if let Err(error) = written {
            eprintln!("storefront-sandbox: cannot write the ready file: {error}");
            std::process::exit(1);
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    drop(sandbox);
}

/// A value as one shell word (single-quoted unless it is plainly safe).
fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Writes `export NAME=value` lines, readable by the owner only (the client secret is in it).
fn write_env_file(path: &std::path::Path, env: &[(String, String)]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut text = String::from(
        "# storefront-sandbox: your app's configuration (sandbox-only secret). Source with: . FILE\n",
    );
    for (name, value) in env {
        text.push_str(&format!("export {name}={}\n", shell_quote(value)));
    }
    let _ = std::fs::remove_file(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(text.as_bytes())
}

/// The seeded OAuth clients for the ready file (sandbox-only secrets).
fn seeded_clients() -> serde_json::Value {
    let client = |id: &str, secret: Option<&str>, merchant: Option<&str>, note: &str| {
        serde_json::json!({
            "client_id": id,
            "client_secret": secret,
            "merchant_no": merchant,
            "note": note,
        })
    };
    serde_json::json!([
        client(
            seed::MERCHANT_CLIENT_ID,
            Some(seed::MERCHANT_CLIENT_SECRET),
            Some(seed::MERCHANT_NO),
            "all scopes"
        ),
        client(
            seed::CATALOG_CLIENT_ID,
            Some(seed::CATALOG_CLIENT_SECRET),
            Some(seed::MERCHANT_NO),
            "no merchant_payments scopes"
        ),
        client(
            seed::OTHER_CLIENT_ID,
            Some(seed::OTHER_CLIENT_SECRET),
            Some(seed::OTHER_MERCHANT_NO),
            "second merchant, all scopes"
        ),
        client(
            seed::INACTIVE_CLIENT_ID,
            Some(seed::INACTIVE_CLIENT_SECRET),
            Some(seed::INACTIVE_MERCHANT_NO),
            "inactive merchant"
        ),
        client(
            seed::UNBOUND_CLIENT_ID,
            Some(seed::UNBOUND_CLIENT_SECRET),
            None,
            "bound to no merchant"
        ),
        client(
            seed::PUBLIC_CLIENT_ID,
            None,
            Some(seed::MERCHANT_NO),
            "public client: openid and products.read, no client-credentials grant"
        ),
    ])
}
