//! The command processor and SDMA engines through the real ROCR, without
//! kernels: AQL barrier packets, completion signals woken through KFD events,
//! and SDMA copies in both directions.

use integration::{c_program, run, Stack};
use std::time::Duration;

#[test]
fn barriers_signals_and_sdma_copies() {
    let exe = c_program("aql_sdma", &["hsa-runtime64"]);
    let mut cmd = Stack::Host.rocjitsu();
    cmd.arg("--").arg(&exe);
    let o = run(cmd, Duration::from_secs(120));
    o.assert_success();
    for line in [
        "barrier_done=0",
        "blocked_while_dep_pending=1",
        "released_after_dep=0",
        "read_index=2",
        "copy_done=0",
        "copy_mismatches=0",
    ] {
        assert!(o.has_line(line), "missing {line:?} in:\n{}\nstderr:\n{}", o.stdout, o.stderr);
    }
    assert!(!o.stderr.contains("leak"), "{}", o.stderr);
}
