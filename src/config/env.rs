//! [`Config::from_env`]: the configuration from `STOREFRONT_*` environment variables
//! (twelve-factor), the one place that rule lives. Every binding calls it (C
//! `sf_config_from_env`, Python `Config.from_env`, PHP `Client::fromEnv`, Kotlin
//! `Storefront.configFromEnv`, Java `StorefrontClient.fromEnv`), and `storefront-sandbox` prints
//! the lines that set them.

use crate::error::{Error, Result};
use crate::secret::Secret;

use super::Config;

/// `{base_url}` (required).
pub const ENV_BASE_URL: &str = "STOREFRONT_BASE_URL";
/// `{token_endpoint}` (required).
pub const ENV_TOKEN_ENDPOINT: &str = "STOREFRONT_TOKEN_ENDPOINT";
/// OAuth client id (required).
pub const ENV_CLIENT_ID: &str = "STOREFRONT_CLIENT_ID";
/// OAuth client secret (required; a [`Secret`], never echoed).
pub const ENV_CLIENT_SECRET: &str = "STOREFRONT_CLIENT_SECRET";
/// `{userinfo_endpoint}` (optional).
pub const ENV_USERINFO_ENDPOINT: &str = "STOREFRONT_USERINFO_ENDPOINT";
/// Space-separated scopes (optional; default [`crate::DEFAULT_CLIENT_SCOPES`]).
pub const ENV_SCOPES: &str = "STOREFRONT_SCOPES";
/// `1`/`true` allows plain HTTP to loopback hosts (optional; the sandbox without `--tls`).
pub const ENV_ALLOW_INSECURE_LOOPBACK: &str = "STOREFRONT_ALLOW_INSECURE_LOOPBACK";
/// Path of a PEM file whose certificates are the only trusted roots (optional; the sandbox's
/// `--tls` CA).
pub const ENV_ROOT_CA_PEM_FILE: &str = "STOREFRONT_ROOT_CA_PEM_FILE";
/// Shared-state store URL (optional; a [`Secret`]: it may carry a password, never echoed).
pub const ENV_SHARED_STATE: &str = "STOREFRONT_SHARED_STATE";

/// Every variable [`Config::from_env`] reads, required ones first.
pub const ENV_VARIABLES: &[&str] = &[
    ENV_BASE_URL,
    ENV_TOKEN_ENDPOINT,
    ENV_CLIENT_ID,
    ENV_CLIENT_SECRET,
    ENV_USERINFO_ENDPOINT,
    ENV_SCOPES,
    ENV_ALLOW_INSECURE_LOOPBACK,
    ENV_ROOT_CA_PEM_FILE,
    ENV_SHARED_STATE,
];

impl Config {
    /// The configuration from the process environment (twelve-factor): the same code runs
    /// against production and against `storefront-sandbox`, which prints the lines to set.
    ///
    /// | Variable | Required | Sets |
    /// |---|---|---|
    /// | `STOREFRONT_BASE_URL` | yes | [`Config::base_url`] (with its path prefix) |
    /// | `STOREFRONT_TOKEN_ENDPOINT` | yes | [`Config::token_endpoint`] |
    /// | `STOREFRONT_CLIENT_ID` | yes | [`Config::client_id`] |
    /// | `STOREFRONT_CLIENT_SECRET` | yes | [`Config::client_secret`] (a [`Secret`]) |
    /// | `STOREFRONT_USERINFO_ENDPOINT` | no | [`Config::userinfo_endpoint`] |
    /// | `STOREFRONT_SCOPES` | no | [`Config::scopes`], space-separated (default: [`crate::DEFAULT_CLIENT_SCOPES`]) |
    /// | `STOREFRONT_ALLOW_INSECURE_LOOPBACK` | no | [`Config::allow_insecure_loopback`]: `1`/`true`/`yes` or `0`/`false`/`no` (default false) |
    /// | `STOREFRONT_ROOT_CA_PEM_FILE` | no | [`Config::root_ca_pem`], read from this PEM file (trust only its roots, e.g. the sandbox's `--tls` CA) |
    /// | `STOREFRONT_SHARED_STATE` | no | [`Config::shared_state`] (a [`Secret`]: the URL may carry a password) |
    ///
    /// An empty variable counts as unset. Every other setting keeps its default (README
    /// "Defaults"); change it on the returned value. The result is checked like
    /// [`crate::Client::new`] checks it: a missing required variable, a value that is not valid
    /// UTF-8 or a bad value is [`Error::Config`] naming the variable; the values of the two
    /// secrets are never part of a message.
    pub fn from_env() -> Result<Config> {
        for name in ENV_VARIABLES {
            if let Err(std::env::VarError::NotUnicode(_)) = std::env::var(name) {
                return Err(Error::Config(format!("{name} is not valid UTF-8")));
            }
        }
        Config::from_env_with(|name| std::env::var(name).ok())
    }

    /// [`Config::from_env`] over another environment: `lookup(name)` gives a variable's value
    /// (`None` when unset). For tests and for hosts that keep their settings in a map.
    pub fn from_env_with(lookup: impl Fn(&str) -> Option<String>) -> Result<Config> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let required = |name: &str| {
            get(name).ok_or_else(|| Error::Config(format!("{name} is not set (or empty)")))
        };
        let base_url = required(ENV_BASE_URL)?;
        let token_endpoint = required(ENV_TOKEN_ENDPOINT)?;
        let client_id = required(ENV_CLIENT_ID)?;
        let client_secret = Secret::new(required(ENV_CLIENT_SECRET)?);
        let mut config = Config::new(
            base_url.trim(),
            token_endpoint.trim(),
            client_id.trim(),
            client_secret,
        );
        config.userinfo_endpoint = get(ENV_USERINFO_ENDPOINT).map(|u| u.trim().to_owned());
        if let Some(scopes) = get(ENV_SCOPES) {
            config.scopes = scopes.split_whitespace().map(str::to_owned).collect();
        }
        if let Some(flag) = get(ENV_ALLOW_INSECURE_LOOPBACK) {
            config.allow_insecure_loopback = parse_flag(ENV_ALLOW_INSECURE_LOOPBACK, &flag)?;
        }
        if let Some(path) = get(ENV_ROOT_CA_PEM_FILE) {
            config.root_ca_pem = Some(read_pem(path.trim())?);
        }
        config.shared_state = get(ENV_SHARED_STATE).map(Secret::new);
        config.check_env_values()?;
        Ok(config)
    }

    /// Checks what came from the environment, naming the variable instead of the field.
    fn check_env_values(&self) -> Result<()> {
        let insecure_hint = |e: Error| match e {
            Error::Config(m) if m.contains("allow_insecure_loopback") => Error::Config(format!(
                "{m}; for a local sandbox set {ENV_ALLOW_INSECURE_LOOPBACK}=1"
            )),
            other => other,
        };
        self.endpoint(ENV_BASE_URL, &self.base_url)
            .map_err(insecure_hint)?;
        self.endpoint(ENV_TOKEN_ENDPOINT, &self.token_endpoint)
            .map_err(insecure_hint)?;
        if let Some(u) = &self.userinfo_endpoint {
            self.endpoint(ENV_USERINFO_ENDPOINT, u)
                .map_err(insecure_hint)?;
        }
        if let Some(url) = &self.shared_state {
            // The store URL's own messages never repeat the URL (it may hold a password).
            crate::store::StoreUrl::parse(url.expose()).map_err(|e| match e {
                Error::Config(m) => Error::Config(format!(
                    "{ENV_SHARED_STATE}: {}",
                    m.strip_prefix("shared_state: ").unwrap_or(&m)
                )),
                other => other,
            })?;
        }
        self.validate().map(|_| ())
    }
}

fn parse_flag(name: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" => Ok(true),
        "0" | "false" | "no" => Ok(false),
        _ => Err(Error::Config(format!(
            "{name} must be 1, true, yes, 0, false or no (got {:?})",
            value.chars().take(16).collect::<String>()
        ))),
    }
}

fn read_pem(path: &str) -> Result<String> {
    let pem = std::fs::read_to_string(path).map_err(|e| {
        Error::Config(format!(
            "{ENV_ROOT_CA_PEM_FILE}: cannot read {path:?} ({e})"
        ))
    })?;
    if !pem.contains("-----BEGIN CERTIFICATE-----") {
        return Err(Error::Config(format!(
            "{ENV_ROOT_CA_PEM_FILE}: {path:?} holds no PEM certificate"
        )));
    }
    Ok(pem)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const SECRET: &str = "sbx_merchant_secret_do_not_echo";

    fn sandbox_env() -> HashMap<String, String> {
        [
            (ENV_BASE_URL, "http://127.0.0.1:8080/api"),
            (ENV_TOKEN_ENDPOINT, "http://127.0.0.1:8080/oauth/token"),
            (
                ENV_USERINFO_ENDPOINT,
                "http://127.0.0.1:8080/oauth/userinfo",
            ),
            (ENV_CLIENT_ID, "sbx_merchant_client"),
            (ENV_CLIENT_SECRET, SECRET),
            (ENV_ALLOW_INSECURE_LOOPBACK, "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    fn from(env: &HashMap<String, String>) -> Result<Config> {
        Config::from_env_with(|name| env.get(name).cloned())
    }

    fn config_error(env: &HashMap<String, String>) -> String {
        match from(env) {
            Err(Error::Config(m)) => {
                assert!(!m.contains(SECRET), "the secret is echoed: {m}");
                m
            }
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn the_sandbox_lines_give_a_valid_loopback_configuration() {
        let c = from(&sandbox_env()).unwrap();
        assert_eq!(c.base_url, "http://127.0.0.1:8080/api");
        assert_eq!(c.token_endpoint, "http://127.0.0.1:8080/oauth/token");
        assert_eq!(
            c.userinfo_endpoint.as_deref(),
            Some("http://127.0.0.1:8080/oauth/userinfo")
        );
        assert_eq!(c.client_id, "sbx_merchant_client");
        assert_eq!(c.client_secret.as_ref().map(Secret::expose), Some(SECRET));
        assert!(c.allow_insecure_loopback);
        assert_eq!(c.scopes, super::super::default_scopes());
        assert!(c.root_ca_pem.is_none() && c.shared_state.is_none());
        assert!(!format!("{c:?}").contains(SECRET));
    }

    #[test]
    fn production_values_need_no_flag_and_optional_ones_are_read() {
        let mut env = sandbox_env();
        env.insert(ENV_BASE_URL.into(), "https://api.example.com/api".into());
        env.insert(
            ENV_TOKEN_ENDPOINT.into(),
            "https://auth.example.com/t".into(),
        );
        env.remove(ENV_USERINFO_ENDPOINT);
        env.remove(ENV_ALLOW_INSECURE_LOOPBACK);
        env.insert(
            ENV_SCOPES.into(),
            "  products.read   merchant.profile.read ".into(),
        );
        env.insert(
            ENV_SHARED_STATE.into(),
            "redis://:store-pass@127.0.0.1:6379/0".into(),
        );
        let c = from(&env).unwrap();
        assert!(!c.allow_insecure_loopback);
        assert!(c.userinfo_endpoint.is_none());
        assert_eq!(c.scopes, ["products.read", "merchant.profile.read"]);
        assert!(c.shared_state.is_some());
        assert!(!format!("{c:?}").contains("store-pass"));
    }

    #[test]
    fn a_missing_or_empty_required_variable_is_named() {
        for name in [
            ENV_BASE_URL,
            ENV_TOKEN_ENDPOINT,
            ENV_CLIENT_ID,
            ENV_CLIENT_SECRET,
        ] {
            let mut env = sandbox_env();
            env.remove(name);
            assert!(config_error(&env).contains(name), "{name} missing");
            env.insert(name.into(), "  ".into());
            assert!(config_error(&env).contains(name), "{name} empty");
        }
    }

    #[test]
    fn plain_http_without_the_flag_names_the_variable_and_the_fix() {
        let mut env = sandbox_env();
        env.remove(ENV_ALLOW_INSECURE_LOOPBACK);
        let m = config_error(&env);
        assert!(m.contains(ENV_BASE_URL), "{m}");
        assert!(m.contains("STOREFRONT_ALLOW_INSECURE_LOOPBACK=1"), "{m}");
        env.insert(ENV_ALLOW_INSECURE_LOOPBACK.into(), "false".into());
        assert!(config_error(&env).contains(ENV_BASE_URL));
        // Loopback only, even with the flag.
        let mut remote = sandbox_env();
        remote.insert(
            ENV_TOKEN_ENDPOINT.into(),
            "http://10.0.0.1/oauth/token".into(),
        );
        assert!(config_error(&remote).contains(ENV_TOKEN_ENDPOINT));
        let mut userinfo = sandbox_env();
        userinfo.insert(ENV_USERINFO_ENDPOINT.into(), "not a url".into());
        assert!(config_error(&userinfo).contains(ENV_USERINFO_ENDPOINT));
    }

    #[test]
    fn bad_values_are_named_and_secrets_never_echoed() {
        let mut env = sandbox_env();
        env.insert(ENV_ALLOW_INSECURE_LOOPBACK.into(), "maybe".into());
        let m = config_error(&env);
        assert!(
            m.contains(ENV_ALLOW_INSECURE_LOOPBACK) && m.contains("maybe"),
            "{m}"
        );

        let mut env = sandbox_env();
        env.insert(ENV_SHARED_STATE.into(), format!("ftp://u:{SECRET}@host/x"));
        let m = config_error(&env);
        assert!(m.starts_with(ENV_SHARED_STATE), "{m}");

        let mut env = sandbox_env();
        env.insert(ENV_SHARED_STATE.into(), SECRET.into());
        assert!(config_error(&env).contains(ENV_SHARED_STATE));

        let mut env = sandbox_env();
        env.insert(ENV_ROOT_CA_PEM_FILE.into(), "/nonexistent/ca.pem".into());
        let m = config_error(&env);
        assert!(
            m.contains(ENV_ROOT_CA_PEM_FILE) && m.contains("/nonexistent/ca.pem"),
            "{m}"
        );
    }

    #[test]
    fn the_root_ca_file_is_read() {
        let dir = std::env::temp_dir().join(format!("sf-env-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let good = dir.join("ca.pem");
        std::fs::write(&good, pem).unwrap();
        let not_pem = dir.join("not.pem");
        std::fs::write(&not_pem, "hello").unwrap();
        let mut env = sandbox_env();
        env.insert(ENV_ROOT_CA_PEM_FILE.into(), good.display().to_string());
        assert_eq!(from(&env).unwrap().root_ca_pem.as_deref(), Some(pem));
        env.insert(ENV_ROOT_CA_PEM_FILE.into(), not_pem.display().to_string());
        assert!(config_error(&env).contains("no PEM certificate"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
