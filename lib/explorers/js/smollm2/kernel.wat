;; The matrix work of SmolLM2 in the page: matrix times vectors, on the weights as the GGUF file stores them.
;;
;; The file keeps each matrix [out, in] as rows of blocks of 32 numbers along `in`:
;;   Q4_1, 20 bytes a block: a half-precision scale d, a half-precision minimum m, then 16 bytes of 4-bit
;;         codes q (the low nibbles are numbers 0-15 of the block, the high nibbles 16-31); a number is d*q + m.
;;   Q8_0, 34 bytes a block: a half-precision scale d, then 32 signed bytes q; a number is d*q.
;; Several vectors (the prompt's positions, the 31 stages of the logit lens): each block is widened once to
;; float32, d*q + m, as the library's float32 copy of the weights is (gguf's NumPy code), and used for every
;; vector, their sums kept in `acc`: nothing is rounded to fewer bits than the library keeps, only summed in
;; another order. Within a block the eight products are added as a tree; the blocks of a row in order.
;; One vector (a new token) is bound by the work of widening every code, done for a single use. There the
;; vector is split instead, block by block, into two 16-bit integers per number: x = scale * (xq + xl / 32768),
;; scale = the block's largest magnitude / 32767, xq the nearest whole step and xl the rest in 32768ths of a
;; step (so x is kept to about 1 part in 2^31 of the block's largest, finer than float32's own rounding of
;; the sums). The codes meet both as integers, pairs of products summed by i32x4.dot_i16x8_s, and each block's
;; sum is scaled once: sum(d*q*x) + m*sum(x) = d*scale*(sum(q*xq) + sum(q*xl)/32768) + m*sum(x), a row at a
;; time. Rounding xq alone (no xl) is a quarter faster but moved the log-probabilities of new tokens by up to
;; 0.002 nats; with xl they stay within 0.00003 of the library's, as with widening (tests/explorers/test_smollm2.py
;; holds both paths within 1e-3). On 2026-12-02 a new token cost about 21 ms of one thread (Node, 2-core VM).
;; Half-precision numbers are read through a table of all 65,536 of them (`lut`, 256 KB, filled by the page's
;; JavaScript), since WebAssembly has no half-precision instruction.
;;
;; Both exported functions take:
;;   w     the address of the matrix's first block     rows  how many rows (outputs)
;;   nb    blocks in a row (inputs / 32)                 x     n input vectors, each nb*32 float32, one after another
;;   n     how many vectors                              out   n output vectors, each rows float32: out[j*rows + r]
;;   lut   the half-precision table                      acc   scratch: 16 bytes a vector (n > 1), or the split
;;                                                             vector, 144 bytes a block (n = 1: see $quant16)
;; Codes become floats by signed conversion (they are small, so it is exact, and x86 has no unsigned one).
(module
  (import "env" "memory" (memory 1 6144))

  (func $hsum (param $s v128) (result f32)
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $s)) (f32x4.extract_lane 1 (local.get $s)))
      (f32.add (f32x4.extract_lane 2 (local.get $s)) (f32x4.extract_lane 3 (local.get $s)))))

  ;; the sums of n vectors for one row, kept in acc, written to out[j*rows + r]
  (func $zero (param $acc i32) (param $n i32)
    (local $j i32)
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
      (v128.store (i32.add (local.get $acc) (i32.shl (local.get $j) (i32.const 4))) (v128.const i32x4 0 0 0 0))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $l))))

  (func $write (param $acc i32) (param $n i32) (param $out i32) (param $rows i32) (param $r i32)
    (local $j i32) (local $op i32)
    (local.set $op (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2))))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
      (f32.store (local.get $op) (call $hsum (v128.load (i32.add (local.get $acc) (i32.shl (local.get $j) (i32.const 4))))))
      (local.set $op (i32.add (local.get $op) (i32.shl (local.get $rows) (i32.const 2))))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $l))))

  ;; acc[j] += the block's eight lanes times vector j's numbers at x + 128 b, for every j
  (func $many (param $acc i32) (param $n i32) (param $xp i32) (param $xstride i32)
      (param $w0 v128) (param $w1 v128) (param $w2 v128) (param $w3 v128)
      (param $w4 v128) (param $w5 v128) (param $w6 v128) (param $w7 v128)
    (local $j i32) (local $ap i32)
    (local.set $ap (local.get $acc))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $j) (local.get $n)))
      (v128.store (local.get $ap) (f32x4.add (v128.load (local.get $ap)) (f32x4.add
        (f32x4.add
          (f32x4.add (f32x4.mul (local.get $w0) (v128.load offset=0 align=4 (local.get $xp)))
                     (f32x4.mul (local.get $w1) (v128.load offset=16 align=4 (local.get $xp))))
          (f32x4.add (f32x4.mul (local.get $w2) (v128.load offset=32 align=4 (local.get $xp)))
                     (f32x4.mul (local.get $w3) (v128.load offset=48 align=4 (local.get $xp)))))
        (f32x4.add
          (f32x4.add (f32x4.mul (local.get $w4) (v128.load offset=64 align=4 (local.get $xp)))
                     (f32x4.mul (local.get $w5) (v128.load offset=80 align=4 (local.get $xp))))
          (f32x4.add (f32x4.mul (local.get $w6) (v128.load offset=96 align=4 (local.get $xp)))
                     (f32x4.mul (local.get $w7) (v128.load offset=112 align=4 (local.get $xp))))))))
      (local.set $xp (i32.add (local.get $xp) (local.get $xstride)))
      (local.set $ap (i32.add (local.get $ap) (i32.const 16)))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $l))))

  
  ;; eight numbers times inv, split into a 16-bit integer part (at hi) and the rest in 32768ths (at lo)
  (func $split8 (param $a v128) (param $b v128) (param $inv v128) (param $hi i32) (param $lo i32)
    (local $ta v128) (local $tb v128) (local $ia v128) (local $ib v128)
    (local.set $ta (f32x4.mul (local.get $a) (local.get $inv)))
    (local.set $tb (f32x4.mul (local.get $b) (local.get $inv)))
    (local.set $ia (i32x4.trunc_sat_f32x4_s (f32x4.nearest (local.get $ta))))
    (local.set $ib (i32x4.trunc_sat_f32x4_s (f32x4.nearest (local.get $tb))))
    (v128.store (local.get $hi) (i16x8.narrow_i32x4_s (local.get $ia) (local.get $ib)))
    (v128.store (local.get $lo) (i16x8.narrow_i32x4_s
      (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.mul (f32x4.sub (local.get $ta) (f32x4.convert_i32x4_s (local.get $ia)))
                                                         (f32x4.splat (f32.const 32768)))))
      (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.mul (f32x4.sub (local.get $tb) (f32x4.convert_i32x4_s (local.get $ib)))
                                                         (f32x4.splat (f32.const 32768))))))))

  ;; One vector split, block by block, into records of 144 bytes at rec, all a block's kernels read from one place:
  ;;   +0    32 whole steps xq (16-bit)        +64   32 rests xl, in 32768ths of a step (16-bit)
  ;;   +128  the block's scale (float32): its largest magnitude / 32767, 0 for a block of zeros
  ;;   +132  the block's sum of x (float32: Q4_1's minimum multiplies it)
  (func $quant16 (param $x i32) (param $nb i32) (param $rec i32)
    (local $end i32) (local $mx v128) (local $inv v128) (local $big f32) (local $sum v128)
    (local.set $end (i32.add (local.get $rec) (i32.mul (local.get $nb) (i32.const 144))))
    (loop $l
      (local.set $mx (f32x4.max
        (f32x4.max (f32x4.max (f32x4.abs (v128.load offset=0 align=4 (local.get $x))) (f32x4.abs (v128.load offset=16 align=4 (local.get $x))))
                   (f32x4.max (f32x4.abs (v128.load offset=32 align=4 (local.get $x))) (f32x4.abs (v128.load offset=48 align=4 (local.get $x)))))
        (f32x4.max (f32x4.max (f32x4.abs (v128.load offset=64 align=4 (local.get $x))) (f32x4.abs (v128.load offset=80 align=4 (local.get $x))))
                   (f32x4.max (f32x4.abs (v128.load offset=96 align=4 (local.get $x))) (f32x4.abs (v128.load offset=112 align=4 (local.get $x)))))))
      (local.set $big (f32.max (f32.max (f32x4.extract_lane 0 (local.get $mx)) (f32x4.extract_lane 1 (local.get $mx)))
                               (f32.max (f32x4.extract_lane 2 (local.get $mx)) (f32x4.extract_lane 3 (local.get $mx)))))
      (if (f32.gt (local.get $big) (f32.const 0))
        (then
          (f32.store offset=128 (local.get $rec) (f32.div (local.get $big) (f32.const 32767)))
          (local.set $inv (f32x4.splat (f32.div (f32.const 32767) (local.get $big)))))
        (else
          (f32.store offset=128 (local.get $rec) (f32.const 0))
          (local.set $inv (v128.const i32x4 0 0 0 0))))
      (local.set $sum (f32x4.add
        (f32x4.add (f32x4.add (v128.load offset=0 align=4 (local.get $x)) (v128.load offset=16 align=4 (local.get $x)))
                   (f32x4.add (v128.load offset=32 align=4 (local.get $x)) (v128.load offset=48 align=4 (local.get $x))))
        (f32x4.add (f32x4.add (v128.load offset=64 align=4 (local.get $x)) (v128.load offset=80 align=4 (local.get $x)))
                   (f32x4.add (v128.load offset=96 align=4 (local.get $x)) (v128.load offset=112 align=4 (local.get $x))))))
      (f32.store offset=132 (local.get $rec) (call $hsum (local.get $sum)))
      (call $split8 (v128.load offset=0 align=4 (local.get $x)) (v128.load offset=16 align=4 (local.get $x))
                    (local.get $inv) (local.get $rec) (i32.add (local.get $rec) (i32.const 64)))
      (call $split8 (v128.load offset=32 align=4 (local.get $x)) (v128.load offset=48 align=4 (local.get $x))
                    (local.get $inv) (i32.add (local.get $rec) (i32.const 16)) (i32.add (local.get $rec) (i32.const 80)))
      (call $split8 (v128.load offset=64 align=4 (local.get $x)) (v128.load offset=80 align=4 (local.get $x))
                    (local.get $inv) (i32.add (local.get $rec) (i32.const 32)) (i32.add (local.get $rec) (i32.const 96)))
      (call $split8 (v128.load offset=96 align=4 (local.get $x)) (v128.load offset=112 align=4 (local.get $x))
                    (local.get $inv) (i32.add (local.get $rec) (i32.const 48)) (i32.add (local.get $rec) (i32.const 112)))
      (local.set $x (i32.add (local.get $x) (i32.const 128)))
      (local.set $rec (i32.add (local.get $rec) (i32.const 144)))
      (br_if $l (i32.lt_u (local.get $rec) (local.get $end)))))

  ;; one vector, Q4_1: d*scale*(sum(q xq) + sum(q xl)/32768) + m*sum(x). The codes meet xq as 16-bit integers,
  ;; pairs of products summed by i32x4.dot_i16x8_s (four dots a block), and the rest of x, in 32768ths of a step,
  ;; the same way, so that nothing is lost against float32. One row at a time: the vector's records are read again
  ;; for each row (they stay in the processor's nearest cache); rows taken four at a time to share those reads
  ;; ran slower, since their sums no longer fitted in the processor's registers.
  (func $q4_1_one (param $w i32) (param $rows i32) (param $nb i32) (param $x i32) (param $out i32) (param $lut i32) (param $rec i32)
    (local $r i32) (local $xp i32) (local $end i32) (local $blk i32)
    (local $t v128) (local $c v128) (local $e0 v128) (local $e1 v128) (local $e2 v128) (local $e3 v128)
    (local $mask v128) (local $rest v128) (local $s v128) (local $mt f32)
    (local.set $mask (i8x16.splat (i32.const 15)))
    (local.set $rest (f32x4.splat (f32.const 0x1p-15)))
    (call $quant16 (local.get $x) (local.get $nb) (local.get $rec))
    (local.set $end (i32.add (local.get $rec) (i32.mul (local.get $nb) (i32.const 144))))
    (local.set $blk (local.get $w))
    (block $rows_done (loop $row
      (br_if $rows_done (i32.ge_u (local.get $r) (local.get $rows)))
      (local.set $s (v128.const i32x4 0 0 0 0))
      (local.set $mt (f32.const 0))
      (local.set $xp (local.get $rec))
      (loop $block
        ;; the 32 codes as 16-bit integers: low nibbles are numbers 0-15, high ones 16-31
        (local.set $t (v128.load offset=4 align=1 (local.get $blk)))
        (local.set $c (v128.and (local.get $t) (local.get $mask)))
        (local.set $t (v128.and (i16x8.shr_u (local.get $t) (i32.const 4)) (local.get $mask)))
        (local.set $e0 (i16x8.extend_low_i8x16_u (local.get $c)))
        (local.set $e1 (i16x8.extend_high_i8x16_u (local.get $c)))
        (local.set $e2 (i16x8.extend_low_i8x16_u (local.get $t)))
        (local.set $e3 (i16x8.extend_high_i8x16_u (local.get $t)))
        (local.set $s (f32x4.add (local.get $s) (f32x4.mul
          (f32x4.add
            (f32x4.convert_i32x4_s (i32x4.add
              (i32x4.add (i32x4.dot_i16x8_s (local.get $e0) (v128.load offset=0 (local.get $xp)))
                         (i32x4.dot_i16x8_s (local.get $e1) (v128.load offset=16 (local.get $xp))))
              (i32x4.add (i32x4.dot_i16x8_s (local.get $e2) (v128.load offset=32 (local.get $xp)))
                         (i32x4.dot_i16x8_s (local.get $e3) (v128.load offset=48 (local.get $xp))))))
            (f32x4.mul (local.get $rest) (f32x4.convert_i32x4_s (i32x4.add
              (i32x4.add (i32x4.dot_i16x8_s (local.get $e0) (v128.load offset=64 (local.get $xp)))
                         (i32x4.dot_i16x8_s (local.get $e1) (v128.load offset=80 (local.get $xp))))
              (i32x4.add (i32x4.dot_i16x8_s (local.get $e2) (v128.load offset=96 (local.get $xp)))
                         (i32x4.dot_i16x8_s (local.get $e3) (v128.load offset=112 (local.get $xp))))))))
          ;; d * the block's scale
          (f32x4.splat (f32.mul (f32.load (i32.add (local.get $lut) (i32.shl (i32.load16_u align=1 (local.get $blk)) (i32.const 2))))
                                (f32.load offset=128 (local.get $xp)))))))
        ;; m * the block's sum of x
        (local.set $mt (f32.add (local.get $mt)
          (f32.mul (f32.load (i32.add (local.get $lut) (i32.shl (i32.load16_u offset=2 align=1 (local.get $blk)) (i32.const 2))))
                   (f32.load offset=132 (local.get $xp)))))
        (local.set $blk (i32.add (local.get $blk) (i32.const 20)))
        (local.set $xp (i32.add (local.get $xp) (i32.const 144)))
        (br_if $block (i32.lt_u (local.get $xp) (local.get $end))))
      (f32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2))) (f32.add (call $hsum (local.get $s)) (local.get $mt)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $row))))

  ;; one vector, Q8_0: d*scale*(sum(q xq) + sum(q xl)/32768), as Q4_1's
  (func $q8_0_one (param $w i32) (param $rows i32) (param $nb i32) (param $x i32) (param $out i32) (param $lut i32) (param $rec i32)
    (local $r i32) (local $xp i32) (local $end i32) (local $blk i32)
    (local $t v128) (local $c v128) (local $e0 v128) (local $e1 v128) (local $e2 v128) (local $e3 v128)
    (local $rest v128) (local $s v128)
    (local.set $rest (f32x4.splat (f32.const 0x1p-15)))
    (call $quant16 (local.get $x) (local.get $nb) (local.get $rec))
    (local.set $end (i32.add (local.get $rec) (i32.mul (local.get $nb) (i32.const 144))))
    (local.set $blk (local.get $w))
    (block $rows_done (loop $row
      (br_if $rows_done (i32.ge_u (local.get $r) (local.get $rows)))
      (local.set $s (v128.const i32x4 0 0 0 0))
      (local.set $xp (local.get $rec))
      (loop $block
        ;; the 32 signed codes as 16-bit integers
        (local.set $c (v128.load offset=2 align=1 (local.get $blk)))
        (local.set $t (v128.load offset=18 align=1 (local.get $blk)))
        (local.set $e0 (i16x8.extend_low_i8x16_s (local.get $c)))
        (local.set $e1 (i16x8.extend_high_i8x16_s (local.get $c)))
        (local.set $e2 (i16x8.extend_low_i8x16_s (local.get $t)))
        (local.set $e3 (i16x8.extend_high_i8x16_s (local.get $t)))
        (local.set $s (f32x4.add (local.get $s) (f32x4.mul
          (f32x4.add
            (f32x4.convert_i32x4_s (i32x4.add
              (i32x4.add (i32x4.dot_i16x8_s (local.get $e0) (v128.load offset=0 (local.get $xp)))
                         (i32x4.dot_i16x8_s (local.get $e1) (v128.load offset=16 (local.get $xp))))
              (i32x4.add (i32x4.dot_i16x8_s (local.get $e2) (v128.load offset=32 (local.get $xp)))
                         (i32x4.dot_i16x8_s (local.get $e3) (v128.load offset=48 (local.get $xp))))))
            (f32x4.mul (local.get $rest) (f32x4.convert_i32x4_s (i32x4.add
              (i32x4.add (i32x4.dot_i16x8_s (local.get $e0) (v128.load offset=64 (local.get $xp)))
                         (i32x4.dot_i16x8_s (local.get $e1) (v128.load offset=80 (local.get $xp))))
              (i32x4.add (i32x4.dot_i16x8_s (local.get $e2) (v128.load offset=96 (local.get $xp)))
                         (i32x4.dot_i16x8_s (local.get $e3) (v128.load offset=112 (local.get $xp))))))))
          ;; d * the block's scale
          (f32x4.splat (f32.mul (f32.load (i32.add (local.get $lut) (i32.shl (i32.load16_u align=1 (local.get $blk)) (i32.const 2))))
                                (f32.load offset=128 (local.get $xp)))))))
        (local.set $blk (i32.add (local.get $blk) (i32.const 34)))
        (local.set $xp (i32.add (local.get $xp) (i32.const 144)))
        (br_if $block (i32.lt_u (local.get $xp) (local.get $end))))
      (f32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2))) (call $hsum (local.get $s)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $row))))

  ;; ------------------------------------------------------------------------------------------------ Q4_1
  (func (export "q4_1") (param $w i32) (param $rows i32) (param $nb i32) (param $x i32) (param $n i32)
      (param $out i32) (param $lut i32) (param $acc i32)
    (local $r i32) (local $b i32) (local $blk i32) (local $xp i32) (local $xstride i32)
    (local $d v128) (local $m v128) (local $v v128) (local $lo v128) (local $hi v128) (local $t v128)
    (local $w0 v128) (local $w1 v128) (local $w2 v128) (local $w3 v128)
    (local $w4 v128) (local $w5 v128) (local $w6 v128) (local $w7 v128)
    (if (i32.eq (local.get $n) (i32.const 1))
      (then
        (call $q4_1_one (local.get $w) (local.get $rows) (local.get $nb) (local.get $x) (local.get $out) (local.get $lut) (local.get $acc))
        (return)))
    (local.set $xstride (i32.mul (local.get $nb) (i32.const 128)))
    (local.set $blk (local.get $w))
    (block $rows_done (loop $row
      (br_if $rows_done (i32.ge_u (local.get $r) (local.get $rows)))
      (call $zero (local.get $acc) (local.get $n))
      (local.set $b (i32.const 0))
      (local.set $xp (local.get $x))
      (block $blocks_done (loop $block
        (br_if $blocks_done (i32.ge_u (local.get $b) (local.get $nb)))
        ;; the codes as floats, in eight lanes of four: low nibbles are numbers 0-15, high ones 16-31
        (local.set $v (v128.load offset=4 align=1 (local.get $blk)))
        (local.set $lo (v128.and (local.get $v) (i8x16.splat (i32.const 15))))
        (local.set $hi (i8x16.shr_u (local.get $v) (i32.const 4)))
        (local.set $t (i16x8.extend_low_i8x16_u (local.get $lo)))
        (local.set $w0 (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_u (local.get $t))))
        (local.set $w1 (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_u (local.get $t))))
        (local.set $t (i16x8.extend_high_i8x16_u (local.get $lo)))
        (local.set $w2 (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_u (local.get $t))))
        (local.set $w3 (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_u (local.get $t))))
        (local.set $t (i16x8.extend_low_i8x16_u (local.get $hi)))
        (local.set $w4 (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_u (local.get $t))))
        (local.set $w5 (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_u (local.get $t))))
        (local.set $t (i16x8.extend_high_i8x16_u (local.get $hi)))
        (local.set $w6 (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_u (local.get $t))))
        (local.set $w7 (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_u (local.get $t))))
        ;; widened once, d*q + m, for every vector
            (local.set $d (f32x4.splat (f32.load (i32.add (local.get $lut) (i32.shl (i32.load16_u align=1 (local.get $blk)) (i32.const 2))))))
            (local.set $m (f32x4.splat (f32.load (i32.add (local.get $lut) (i32.shl (i32.load16_u offset=2 align=1 (local.get $blk)) (i32.const 2))))))
            (call $many (local.get $acc) (local.get $n) (local.get $xp) (local.get $xstride)
              (f32x4.add (f32x4.mul (local.get $d) (local.get $w0)) (local.get $m))
              (f32x4.add (f32x4.mul (local.get $d) (local.get $w1)) (local.get $m))
              (f32x4.add (f32x4.mul (local.get $d) (local.get $w2)) (local.get $m))
              (f32x4.add (f32x4.mul (local.get $d) (local.get $w3)) (local.get $m))
              (f32x4.add (f32x4.mul (local.get $d) (local.get $w4)) (local.get $m))
              (f32x4.add (f32x4.mul (local.get $d) (local.get $w5)) (local.get $m))
              (f32x4.add (f32x4.mul (local.get $d) (local.get $w6)) (local.get $m))
              (f32x4.add (f32x4.mul (local.get $d) (local.get $w7)) (local.get $m)))
        (local.set $blk (i32.add (local.get $blk) (i32.const 20)))
        (local.set $xp (i32.add (local.get $xp) (i32.const 128)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $block)))
      (call $write (local.get $acc) (local.get $n) (local.get $out) (local.get $rows) (local.get $r))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $row))))

  ;; ------------------------------------------------------------------------------------------------ Q8_0
  (func (export "q8_0") (param $w i32) (param $rows i32) (param $nb i32) (param $x i32) (param $n i32)
      (param $out i32) (param $lut i32) (param $acc i32)
    (local $r i32) (local $b i32) (local $blk i32) (local $xp i32) (local $xstride i32)
    (local $d v128) (local $v v128) (local $t v128)
    (local $w0 v128) (local $w1 v128) (local $w2 v128) (local $w3 v128)
    (local $w4 v128) (local $w5 v128) (local $w6 v128) (local $w7 v128)
    (if (i32.eq (local.get $n) (i32.const 1))
      (then
        (call $q8_0_one (local.get $w) (local.get $rows) (local.get $nb) (local.get $x) (local.get $out) (local.get $lut) (local.get $acc))
        (return)))
    (local.set $xstride (i32.mul (local.get $nb) (i32.const 128)))
    (local.set $blk (local.get $w))
    (block $rows_done (loop $row
      (br_if $rows_done (i32.ge_u (local.get $r) (local.get $rows)))
      (call $zero (local.get $acc) (local.get $n))
      (local.set $b (i32.const 0))
      (local.set $xp (local.get $x))
      (block $blocks_done (loop $block
        (br_if $blocks_done (i32.ge_u (local.get $b) (local.get $nb)))
        ;; the 32 signed codes as floats, in eight lanes of four
        (local.set $v (v128.load offset=2 align=1 (local.get $blk)))
        (local.set $t (i16x8.extend_low_i8x16_s (local.get $v)))
        (local.set $w0 (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $t))))
        (local.set $w1 (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $t))))
        (local.set $t (i16x8.extend_high_i8x16_s (local.get $v)))
        (local.set $w2 (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $t))))
        (local.set $w3 (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $t))))
        (local.set $v (v128.load offset=18 align=1 (local.get $blk)))
        (local.set $t (i16x8.extend_low_i8x16_s (local.get $v)))
        (local.set $w4 (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $t))))
        (local.set $w5 (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $t))))
        (local.set $t (i16x8.extend_high_i8x16_s (local.get $v)))
        (local.set $w6 (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $t))))
        (local.set $w7 (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $t))))
        (local.set $d (f32x4.splat (f32.load (i32.add (local.get $lut) (i32.shl (i32.load16_u align=1 (local.get $blk)) (i32.const 2))))))
        ;; widened once, q*d, for every vector
            (call $many (local.get $acc) (local.get $n) (local.get $xp) (local.get $xstride)
              (f32x4.mul (local.get $w0) (local.get $d)) (f32x4.mul (local.get $w1) (local.get $d))
              (f32x4.mul (local.get $w2) (local.get $d)) (f32x4.mul (local.get $w3) (local.get $d))
              (f32x4.mul (local.get $w4) (local.get $d)) (f32x4.mul (local.get $w5) (local.get $d))
              (f32x4.mul (local.get $w6) (local.get $d)) (f32x4.mul (local.get $w7) (local.get $d)))
        (local.set $blk (i32.add (local.get $blk) (i32.const 34)))
        (local.set $xp (i32.add (local.get $xp) (i32.const 128)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $block)))
      (call $write (local.get $acc) (local.get $n) (local.get $out) (local.get $rows) (local.get $r))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $row))))

  ;; ------------------------------------------------------------------------------------------------ SwiGLU
  ;; The gated MLP's product in place, four numbers at a time (n a multiple of 4): g[i] = g[i] / (1 + e^-g[i]) * u[i],
  ;; SiLU of the gate times the up projection. e^t in float32 as Cephes' expf computes it: t = k ln2 + r with k
  ;; whole and |r| <= ln2/2 (ln2 in two parts, so that k ln2 is exact), e^r by a polynomial within a unit in the
  ;; last place, 2^k written into the exponent's bits. t is held within [-87, 88], where 2^k is a normal float32;
  ;; beyond, SiLU is the gate itself or 0 to float32's precision. (Math.exp in JavaScript cost a millisecond a token.)
  (func (export "silu_mul") (param $g i32) (param $u i32) (param $n i32)
    (local $end i32) (local $a v128) (local $t v128) (local $k v128) (local $r v128) (local $p v128)
    (local.set $end (i32.add (local.get $g) (i32.shl (local.get $n) (i32.const 2))))
    (loop $l
      (local.set $a (v128.load (local.get $g)))
      (local.set $t (f32x4.min (f32x4.max (f32x4.neg (local.get $a)) (f32x4.splat (f32.const -87))) (f32x4.splat (f32.const 88))))
      (local.set $k (f32x4.nearest (f32x4.mul (local.get $t) (f32x4.splat (f32.const 1.44269504088896341)))))
      (local.set $r (f32x4.sub (f32x4.sub (local.get $t) (f32x4.mul (local.get $k) (f32x4.splat (f32.const 0.693359375))))
                               (f32x4.mul (local.get $k) (f32x4.splat (f32.const -2.12194440e-4)))))
      (local.set $p (f32x4.splat (f32.const 1.9875691500e-4)))
      (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r)) (f32x4.splat (f32.const 1.3981999507e-3))))
      (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r)) (f32x4.splat (f32.const 8.3334519073e-3))))
      (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r)) (f32x4.splat (f32.const 4.1665795894e-2))))
      (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r)) (f32x4.splat (f32.const 1.6666665459e-1))))
      (local.set $p (f32x4.add (f32x4.mul (local.get $p) (local.get $r)) (f32x4.splat (f32.const 5.0000001201e-1))))
      (local.set $p (f32x4.add (f32x4.add (f32x4.mul (f32x4.mul (local.get $p) (local.get $r)) (local.get $r)) (local.get $r))
                               (f32x4.splat (f32.const 1))))
      ;; times 2^k: k + 127 in the exponent's bits
      (local.set $p (f32x4.mul (local.get $p)
        (i32x4.shl (i32x4.add (i32x4.trunc_sat_f32x4_s (local.get $k)) (i32x4.splat (i32.const 127))) (i32.const 23))))
      (v128.store (local.get $g) (f32x4.mul (f32x4.div (local.get $a) (f32x4.add (f32x4.splat (f32.const 1)) (local.get $p)))
                                            (v128.load (local.get $u))))
      (local.set $g (i32.add (local.get $g) (i32.const 16)))
      (local.set $u (i32.add (local.get $u) (i32.const 16)))
      (br_if $l (i32.lt_u (local.get $g) (local.get $end)))))
)
