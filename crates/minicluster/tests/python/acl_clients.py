"""ACLs through the two Python clients, run by crates/minicluster/tests/python_clients.rs.

argv: NameNode HTTP address (host:port), NameNode RPC URI (hdfs://host:port), user name.
HdfsCLI (the `hdfs` package) talks WebHDFS; hdfs-native's Python bindings talk RPC. Neither
has extended-attribute calls (HdfsCLI 2.7.3, hdfs-native 0.14.7), so only ACLs are exercised.
Each check is counted; the last line is "checks: N" (the Rust side requires it).
"""

import sys

from hdfs import InsecureClient
from hdfs.util import HdfsError
from hdfs_native import AclEntry, Client

http, rpc_uri, me = sys.argv[1:4]
checks = 0


def check(cond, what):
    global checks
    if not cond:
        raise AssertionError(what)
    checks += 1


def raises(fn, what):
    try:
        fn()
    except HdfsError as e:
        check(True, what)
        return str(e)
    raise AssertionError(f"{what}: no error")


cli = InsecureClient(f"http://{http}", user=me)
native = Client(rpc_uri)

# HdfsCLI: set_acl (SETACL, or MODIFYACLENTRIES with clear=False), acl_status, the removals.
cli.makedirs("/py/cli", permission="750")
cli.set_acl("/py/cli", "user::rwx,user:bob:r-x,group::r-x,other::---")
st = cli.acl_status("/py/cli")
check(st["entries"] == ["user:bob:r-x", "group::r-x"], st)
check(st["owner"] == me and st["permission"] == "750" and st["stickyBit"] is False, st)
check(cli.status("/py/cli").get("aclBit") is True, "aclBit in GETFILESTATUS")
cli.set_acl("/py/cli", "user:carol:rw-,default:user:dave:r-x", clear=False)
st = cli.acl_status("/py/cli")
check("user:carol:rw-" in st["entries"] and "default:user:dave:r-x" in st["entries"], st)
check(st["permission"] == "770", st)  # the mask grew to rwx
cli.remove_acl_entries("/py/cli", "user:bob:")
check("user:bob:r-x" not in cli.acl_status("/py/cli")["entries"], "bob removed")
cli.remove_default_acl("/py/cli")
check(not any(e.startswith("default:") for e in cli.acl_status("/py/cli")["entries"]), "defaults removed")

# What HdfsCLI set, hdfs-native reads over RPC.
nst = native.get_acl_status("/py/cli")
text = sorted(f"{e.type}:{e.name or ''}:{e.permissions}" for e in nst.entries)
check(text == ["group::r-x", "user:carol:rw-"], text)
check((nst.owner, nst.permission & 0o777) == (me, 0o770), (nst.owner, oct(nst.permission)))

cli.remove_acl("/py/cli")
check(cli.acl_status("/py/cli")["entries"] == [], "all removed")
check(cli.acl_status("/py/none", strict=False) is None, "missing path, not strict")
msg = raises(lambda: cli.acl_status("/py/none"), "missing path")
check("/py/none" in msg, msg)
msg = raises(lambda: cli.set_acl("/py/cli", "user:bob"), "spec outside Hadoop's domain")
check("aclspec" in msg, msg)
mallory = InsecureClient(f"http://{http}", user="mallory")
msg = raises(lambda: mallory.set_acl("/py/cli", "user:bob:rwx", clear=False), "not the owner")
check("Permission denied" in msg, msg)

# hdfs-native: modify, set, remove entries, remove default, remove all; HdfsCLI reads them.
native.mkdirs("/py/native", 0o750, True)
native.modify_acl_entries(
    "/py/native",
    [AclEntry("user", "access", "r-x", "bob"), AclEntry("group", "default", "rwx", "eng")],
)
st = cli.acl_status("/py/native")
check("user:bob:r-x" in st["entries"] and "default:group:eng:rwx" in st["entries"], st)
native.set_acl(
    "/py/native",
    [
        AclEntry("user", "access", "rwx"),
        AclEntry("user", "access", "rw-", "carol"),
        AclEntry("group", "access", "r--"),
        AclEntry("other", "access", "---"),
    ],
)
# A spec of access entries only keeps the default entries (Hadoop's replaceAclEntries).
entries = cli.acl_status("/py/native")["entries"]
access = [e for e in entries if not e.startswith("default:")]
check(access == ["user:carol:rw-", "group::r--"], entries)
check("default:group:eng:rwx" in entries, entries)
native.remove_acl_entries("/py/native", [AclEntry("user", "access", "---", "carol")])
entries = cli.acl_status("/py/native")["entries"]
check("user:carol:rw-" not in entries and "group::r--" in entries, entries)
native.modify_acl_entries("/py/native", [AclEntry("user", "default", "r-x", "dave")])
native.remove_default_acl("/py/native")
check(all(e.scope == "access" for e in native.get_acl_status("/py/native").entries), "no defaults")
native.remove_acl("/py/native")
check(native.get_acl_status("/py/native").entries == [], "remove_acl")

print(f"checks: {checks}")
