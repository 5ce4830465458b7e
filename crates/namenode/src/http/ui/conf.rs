//! `/conf`: the NameNode's configuration as Hadoop XML, as Hadoop's ConfServlet serves it,
//! with the values of sensitive keys (passwords, secrets, credentials, keys and tokens of
//! the object stores, as Hadoop's default `hadoop.security.sensitive-config-keys` names them)
//! replaced by `<redacted>`.

use rhdfs_conf::Configuration;

/// Whether `key`'s value is a secret.
pub fn sensitive(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.ends_with("secret")
        || k.ends_with("password")
        || k.ends_with("ssl.keystore.pass")
        || k.ends_with("credential")
        || (k.starts_with("fs.s3") && k.contains("secret") && k.contains("key"))
        || k.contains("server-side-encryption.key")
        || k.starts_with("fs.azure.account.key")
        || (k.contains("oauth")
            && (k.contains("secret") || k.contains("password") || k.contains("token")))
        || k == "hadoop.security.sensitive-config-keys"
}

/// The redacted XML document.
pub fn xml(conf: &Configuration) -> String {
    let mut c = conf.clone();
    let secret: Vec<String> = conf
        .iter()
        .filter(|(k, _)| sensitive(k))
        .map(|(k, _)| k.to_string())
        .collect();
    for k in secret {
        c.set(&k, "<redacted>");
    }
    c.to_xml_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_secrets_only() {
        let mut c = Configuration::new();
        c.set("fs.s3a.secret.key", "s3cr3t");
        c.set("ssl.server.keystore.password", "pw");
        c.set("dfs.replication", "3");
        let x = xml(&c);
        assert!(!x.contains("s3cr3t") && !x.contains(">pw<"), "{x}");
        assert!(x.contains("<value>&lt;redacted&gt;</value>"), "{x}");
        assert!(x.contains("<value>3</value>"), "{x}");
    }
}
