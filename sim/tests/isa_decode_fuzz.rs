//! Arbitrary words never make the decoder or the printer panic, and a decoded instruction is
//! self-consistent: its length fits the words, and decoding just those bytes gives it again.

use proptest::prelude::*;
use sim::isa::{decode, Target};

fn check(words: &[u32], target: Target) {
    if let Ok(inst) = decode(words, target) {
        let n = usize::from(inst.len / 4);
        assert!(matches!(inst.len, 4 | 8 | 12), "{inst}: len {}", inst.len);
        assert!(n <= words.len());
        assert_eq!(decode(&words[..n], target), Ok(inst));
        assert!(!inst.to_string().is_empty());
        for i in 0..3 {
            let _ = inst.src_regs(i);
            let _ = inst.src_const(i);
        }
        let _ = inst.dst_regs(0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn arbitrary_words_never_panic(w in prop::array::uniform3(any::<u32>()), cut in 0usize..=3) {
        check(&w[..cut], Target::Gfx90a);
        check(&w[..cut], Target::Gfx942);
    }

    /// Random words with each encoding's prefix, so every decoder path is exercised.
    #[test]
    fn prefixed_words_never_panic(
        prefix in prop::sample::select(vec![
            (0b10u32, 2u32), (0b1011, 4), (0b1_0111_1101, 9), (0b1_0111_1110, 9),
            (0b1_0111_1111, 9), (0b110000, 6), (0, 1), (0b011_1111, 7), (0b011_1110, 7),
            (0b110100, 6), (0b1_1010_0111, 9), (0b110110, 6), (0b110111, 6), (0b111000, 6),
            (0b111010, 6), (0b111100, 6),
        ]),
        w in prop::array::uniform3(any::<u32>()),
    ) {
        let (p, bits) = prefix;
        let w0 = (p << (32 - bits)) | (w[0] >> bits);
        let words = [w0, w[1], w[2]];
        check(&words, Target::Gfx90a);
        check(&words, Target::Gfx942);
    }
}
