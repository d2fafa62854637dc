;; WebAssembly SIMD kernels for byte search, compiled into simd-bytes.generated.ts by
;; `npm run gen:simd` (scripts/gen-simd-bytes.ts). Each looks at 16 bytes per step; the caller
;; passes offsets into the memory it provides, and every offset read is below offset + length.
(module
  (import "env" "memory" (memory 1))

  ;; How many bytes in [p, p + len) are 0x0a. Sixteen lane counters take one step each
  ;; (i8x16.eq gives -1 where equal) and are summed every 255 steps, before a lane overflows.
  (func (export "count") (param $p i32) (param $len i32) (result i32)
    (local $end i32) (local $last i32) (local $n i32) (local $k i32) (local $acc v128)
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (local.set $last (i32.sub (local.get $end) (i32.const 16)))
    (block $blocks_done
      (loop $blocks
        (br_if $blocks_done (i32.gt_s (local.get $p) (local.get $last)))
        (local.set $acc (v128.const i64x2 0 0))
        (local.set $k (i32.const 255))
        (block $run_done
          (loop $run
            (br_if $run_done (i32.gt_s (local.get $p) (local.get $last)))
            (br_if $run_done (i32.eqz (local.get $k)))
            (local.set $acc
              (i8x16.sub (local.get $acc)
                (i8x16.eq (v128.load (local.get $p)) (i8x16.splat (i32.const 0x0a)))))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (local.set $k (i32.sub (local.get $k) (i32.const 1)))
            (br $run)))
        (local.set $acc
          (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $acc))))
        (local.set $n
          (i32.add (local.get $n)
            (i32.add
              (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
              (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc))))))
        (br $blocks)))
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.ge_u (local.get $p) (local.get $end)))
        (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x0a))
          (then (local.set $n (i32.add (local.get $n) (i32.const 1)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $tail)))
    (local.get $n))

  ;; Whether the needle (nl bytes at np, then nl mask bytes) matches the text at c: text byte j,
  ;; or-ed with mask byte j (0x20 folds an ASCII letter's case, 0 compares exactly), equals
  ;; needle byte j.
  (func $matches (param $c i32) (param $np i32) (param $nl i32) (result i32)
    (local $j i32)
    (block $done
      (loop $bytes
        (br_if $done (i32.ge_u (local.get $j) (local.get $nl)))
        (if (i32.ne
              (i32.or
                (i32.load8_u (i32.add (local.get $c) (local.get $j)))
                (i32.load8_u (i32.add (i32.add (local.get $np) (local.get $nl)) (local.get $j))))
              (i32.load8_u (i32.add (local.get $np) (local.get $j))))
          (then (return (i32.const 0))))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $bytes)))
    (i32.const 1))

  ;; The first offset at or after `from` where the needle (see $matches) occurs in the text of
  ;; `len` bytes at t, or -1. Each step tests 16 starts at once by two of the needle's bytes,
  ;; at i1 and i2 (the caller picks rare ones), and checks each start where both match.
  (func (export "find")
    (param $t i32) (param $len i32) (param $from i32)
    (param $np i32) (param $nl i32) (param $i1 i32) (param $i2 i32) (result i32)
    (local $last i32) (local $s i32) (local $m i32) (local $c i32)
    (local $b1 v128) (local $b2 v128) (local $m1 v128) (local $m2 v128)
    (local.set $b1 (i8x16.splat (i32.load8_u (i32.add (local.get $np) (local.get $i1)))))
    (local.set $b2 (i8x16.splat (i32.load8_u (i32.add (local.get $np) (local.get $i2)))))
    (local.set $m1 (i8x16.splat
      (i32.load8_u (i32.add (i32.add (local.get $np) (local.get $nl)) (local.get $i1)))))
    (local.set $m2 (i8x16.splat
      (i32.load8_u (i32.add (i32.add (local.get $np) (local.get $nl)) (local.get $i2)))))
    ;; The last start at which the needle fits.
    (local.set $last (i32.sub (local.get $len) (local.get $nl)))
    (local.set $s (local.get $from))
    ;; 16 starts from s: the loads reach s + 15 + i (i < nl), within the text while s + 15 ≤ last.
    (block $steps_done
      (loop $steps
        (br_if $steps_done (i32.gt_s (i32.add (local.get $s) (i32.const 15)) (local.get $last)))
        (local.set $m
          (i8x16.bitmask
            (v128.and
              (i8x16.eq
                (v128.or
                  (v128.load (i32.add (i32.add (local.get $t) (local.get $s)) (local.get $i1)))
                  (local.get $m1))
                (local.get $b1))
              (i8x16.eq
                (v128.or
                  (v128.load (i32.add (i32.add (local.get $t) (local.get $s)) (local.get $i2)))
                  (local.get $m2))
                (local.get $b2)))))
        (block $starts_done
          (loop $starts
            (br_if $starts_done (i32.eqz (local.get $m)))
            (local.set $c (i32.add (local.get $s) (i32.ctz (local.get $m))))
            (if (call $matches (i32.add (local.get $t) (local.get $c)) (local.get $np) (local.get $nl))
              (then (return (local.get $c))))
            (local.set $m (i32.and (local.get $m) (i32.sub (local.get $m) (i32.const 1))))
            (br $starts)))
        (local.set $s (i32.add (local.get $s) (i32.const 16)))
        (br $steps)))
    ;; The last starts one at a time.
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.gt_s (local.get $s) (local.get $last)))
        (if (call $matches (i32.add (local.get $t) (local.get $s)) (local.get $np) (local.get $nl))
          (then (return (local.get $s))))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (br $tail)))
    (i32.const -1))
)
