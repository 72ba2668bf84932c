//! Device code that calls functions with a stack (issue 18), on the ROCm 5.2 host stack and
//! the sid root (HIP 6.4, where the stack is what `hipLimitStackSize` says), in local and
//! `--daemon` mode: recursion, virtual calls, a deep call chain with arrays in every frame,
//! printf from a called function (`device_calls.hip`), and a failing device-side assert that
//! prints its text and ends the application as the hardware does (`device_assert.hip`).

use integration::{Mode, Stack};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(300);

fn calls(stack: Stack) {
    let exe = stack.hip_program("device_calls", "gfx90a", &[]);
    let deep = if stack == Stack::Host {
        "recursion 40 frames deep"
    } else {
        "recursion 200 frames deep with a 96 KiB stack limit"
    };
    for mode in Mode::OWN {
        let o = stack.run_program(mode, &exe, &[], DEADLINE);
        let what = format!("device_calls ({}, {})", stack.name(), mode.name());
        o.assert_passes(&what, &["recursion, virtual calls and a deep call chain", deep]);
        // printf from a called function, for every 97th thread: thread 0 computes
        // fib(0) + area(0) + chain(0, 0) = 0; the values are checked by the program; here the
        // lines themselves.
        assert!(o.has_line("thread 0 computed 0"), "{what}:\n{}", o.stdout);
        let printed = o.stdout.lines().filter(|l| l.starts_with("thread ")).count();
        assert_eq!(printed, (0..2048).filter(|t| t % 97 == 0).count(), "{what}:\n{}", o.stdout);
    }
}

fn assertion(stack: Stack) {
    let exe = stack.hip_program("device_assert", "gfx90a", &[]);
    for mode in Mode::OWN {
        let what = format!("device_assert ({}, {})", stack.name(), mode.name());
        let o = stack.run_program(mode, &exe, &[], DEADLINE);
        assert!(!o.status.success(), "{what}: the application survived its failed assertion:\n{}", o.stdout);
        assert!(!o.stdout.contains("survived"), "{what}:\n{}", o.stdout);
        assert!(
            o.stderr.contains("Device-side assertion `p[t] != 42' failed."),
            "{what}: no assertion text:\nstderr:\n{}",
            o.stderr
        );
        // The next run, with nothing failing, works.
        stack
            .run_program(mode, &exe, &["pass"], DEADLINE)
            .assert_passes(&format!("{what}, second run"), &["kernel with an assert that holds"]);
    }
}

#[test]
fn calls_with_a_stack_on_rocm52() {
    calls(Stack::Host);
}

#[test]
fn calls_with_a_stack_on_sid() {
    calls(Stack::Sid);
}

#[test]
fn a_failed_device_assert_ends_the_application_on_rocm52() {
    assertion(Stack::Host);
}

#[test]
fn a_failed_device_assert_ends_the_application_on_sid() {
    assertion(Stack::Sid);
}
