//! Secrets out of command-line messages (rule: no CLI message, error or not, shows a password,
//! user name or query token that was part of a URL on the command line or in a ready file).

/// `url` as shown in messages: user name and password replaced by `[redacted]`, the query by
/// `redacted`, no fragment.
pub fn url(url: &url::Url) -> String {
    let mut shown = url.clone();
    let had_userinfo = !url.username().is_empty() || url.password().is_some();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    if shown.query().is_some() {
        shown.set_query(Some("redacted"));
    }
    shown.set_fragment(None);
    let text = shown.to_string();
    if had_userinfo {
        text.replacen("://", "://[redacted]@", 1)
    } else {
        text
    }
}

/// A URL given as text, as shown in messages: parsed and redacted as [`url`]; when it does not
/// parse, anything before an `@` of its authority and everything from `?` or `#` is replaced.
pub fn text(raw: &str) -> String {
    if let Ok(parsed) = url::Url::parse(raw) {
        return url(&parsed);
    }
    let (before_query, cut) = match raw.find(['?', '#']) {
        Some(at) => (&raw[..at], true),
        None => (raw, false),
    };
    let (scheme, rest) = match before_query.find("://") {
        Some(at) => before_query.split_at(at + 3),
        None => ("", before_query),
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => format!("[redacted]@{}", &authority[at + 1..]),
        None => authority.to_owned(),
    };
    let tail = if cut { "?redacted" } else { "" };
    format!("{scheme}{authority}{path}{tail}")
}

/// The secrets a URL carries (password, query values), to scrub from any message that might
/// quote them (an HTTP library's error, say). The user name is not scrubbed from free text (it
/// may be an ordinary word); URLs in messages never show it.
pub fn secrets_of(url: &url::Url) -> Vec<String> {
    let mut secrets: Vec<String> = url
        .query_pairs()
        .map(|(_, value)| value.into_owned())
        .collect();
    secrets.extend(url.password().map(str::to_owned));
    let decoded: Vec<String> = secrets
        .iter()
        .filter_map(|s| {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
        })
        .collect();
    secrets.extend(decoded);
    secrets.retain(|s| s.len() >= 3);
    secrets
}

/// `message` with every one of `secrets` replaced by `[redacted]`.
pub fn scrub(message: &str, secrets: &[String]) -> String {
    secrets.iter().fold(message.to_owned(), |text, secret| {
        text.replace(secret.as_str(), "[redacted]")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_and_query_never_show() {
        let parsed =
            url::Url::parse("http://user:hunter2@127.0.0.1:1/_sandbox?token=abc#x").unwrap();
        let shown = url(&parsed);
        assert_eq!(shown, "http://[redacted]@127.0.0.1:1/_sandbox?redacted");
        assert_eq!(
            text("http://user:hunter2@[bad/_sandbox?token=abc"),
            "http://[redacted]@[bad/_sandbox?redacted"
        );
        assert_eq!(
            text("http://127.0.0.1:1/_sandbox"),
            "http://127.0.0.1:1/_sandbox"
        );
        let secrets = secrets_of(&parsed);
        assert_eq!(
            scrub("for url (http://user:hunter2@x/?token=abc)", &secrets),
            "for url (http://user:[redacted]@x/?token=[redacted])"
        );
    }
}
