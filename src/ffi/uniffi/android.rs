//! Android trust: the rustls platform verifier calls into the JVM, so it needs the app's
//! `Context` before the first `Client` that uses it (one without `root_ca_pem`) is built;
//! without that initialisation `rustls-platform-verifier` panics. The Kotlin helper
//! `Storefront.client(config, context)` performs it through the JNI function below, and
//! `Client::new` refuses (with `Config`, never a panic) to build such a client on Android until
//! it has happened. The JVM and every other platform need nothing.

use super::config::ClientConfig;
use super::error::Result;

/// Fails on Android when the platform verifier would be used but was never initialised.
pub(crate) fn check_ready(config: &ClientConfig) -> Result<()> {
    #[cfg(target_os = "android")]
    if config.root_ca_pem.is_none() && !jni_init::READY.load(std::sync::atomic::Ordering::Acquire) {
        return Err(super::error::StorefrontError::Config {
            detail: "Android: build the client with Storefront.client(config, context) so the \
                     platform certificate verifier is initialised with the app Context"
                .into(),
        });
    }
    let _ = config;
    Ok(())
}

#[cfg(target_os = "android")]
mod jni_init {
    //! `dev.storefront.AndroidPlatformVerifier.nativeInit(context)`: hands the application
    //! `Context` to rustls-platform-verifier. Built for Android targets only; there is no
    //! Android toolchain on the CI machines, so it is type-checked there only against jni
    //! 0.22.4 with the verifier call stubbed (see bindings/kotlin/README.md).

    use std::sync::atomic::{AtomicBool, Ordering};

    use jni::objects::{JClass, JObject};
    use jni::sys::jboolean;

    /// Set once `init_with_env` succeeded.
    pub(super) static READY: AtomicBool = AtomicBool::new(false);

    /// JNI entry point; returns true on success. `with_env` catches panics, so none unwinds
    /// into the JVM.
    #[unsafe(no_mangle)]
    pub extern "system" fn Java_dev_storefront_AndroidPlatformVerifier_nativeInit<'local>(
        mut env: jni::EnvUnowned<'local>,
        _class: JClass<'local>,
        context: JObject<'local>,
    ) -> jboolean {
        let outcome = env
            .with_env(|env| -> Result<(), jni::errors::Error> {
                rustls_platform_verifier::android::init_with_env(env, context)
            })
            .into_outcome();
        let ok = matches!(outcome, jni::Outcome::Ok(()));
        if ok {
            READY.store(true, Ordering::Release);
        }
        ok.into()
    }
}
