;; Sign-bit first pass of the vector search (see src/sign-scan.ts and src/vector-codes.ts).
;; scan(bits, count, bytes, lut, out): for each of `count` codes of `bytes` bytes (a multiple of
;; 4) stored contiguously at `bits`, writes to `out` (f32 per code) the sum over byte positions j
;; of lut[j * 256 + byte j] (f64 entries). The order of additions mirrors `scoreWords` in
;; vector-codes.ts exactly — per 32-bit word, s0 += (t[b0] + t[b1]) and s1 += (t[b2] + t[b3]);
;; score = f32(s0 + s1) — so both give bit-identical scores.
;; Built to assets/sign-scan.wasm by scripts/build-sign-scan-wasm.mjs (wabt).
(module
  (import "env" "memory" (memory 1))
  (func (export "scan")
    (param $bits i32) (param $count i32) (param $bytes i32) (param $lut i32) (param $out i32)
    (local $end i32) (local $rowEnd i32) (local $t i32) (local $w i32)
    (local $s0 f64) (local $s1 f64)
    (local.set $end
      (i32.add (local.get $bits) (i32.mul (local.get $count) (local.get $bytes))))
    (block $done
      (loop $codes
        (br_if $done (i32.ge_u (local.get $bits) (local.get $end)))
        (local.set $rowEnd (i32.add (local.get $bits) (local.get $bytes)))
        (local.set $s0 (f64.const 0))
        (local.set $s1 (f64.const 0))
        (local.set $t (local.get $lut))
        (loop $words
          (local.set $w (i32.load (local.get $bits)))
          (local.set $s0
            (f64.add (local.get $s0)
              (f64.add
                (f64.load
                  (i32.add (local.get $t)
                    (i32.shl (i32.and (local.get $w) (i32.const 255)) (i32.const 3))))
                (f64.load offset=2048
                  (i32.add (local.get $t)
                    (i32.and (i32.shr_u (local.get $w) (i32.const 5)) (i32.const 2040)))))))
          (local.set $s1
            (f64.add (local.get $s1)
              (f64.add
                (f64.load offset=4096
                  (i32.add (local.get $t)
                    (i32.and (i32.shr_u (local.get $w) (i32.const 13)) (i32.const 2040))))
                (f64.load offset=6144
                  (i32.add (local.get $t)
                    (i32.and (i32.shr_u (local.get $w) (i32.const 21)) (i32.const 2040)))))))
          (local.set $t (i32.add (local.get $t) (i32.const 8192)))
          (local.set $bits (i32.add (local.get $bits) (i32.const 4)))
          (br_if $words (i32.lt_u (local.get $bits) (local.get $rowEnd))))
        (f32.store (local.get $out)
          (f32.demote_f64 (f64.add (local.get $s0) (local.get $s1))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $codes))))
)
