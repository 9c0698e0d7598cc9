// Float math in branch-free arithmetic that the compiler vectorises (lite/loop_isa.h's loops):
// e^x for the float softmax, the logistic function for LOGISTIC, tanh for TANH, 1 + erf for GELU.
// Each is within a few ulp of the C library's function (std::exp, std::tanh), far inside the float
// agreement tolerance.
#ifndef EMBER_SRC_LITE_VEC_MATH_H_
#define EMBER_SRC_LITE_VEC_MATH_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "lite/loop_isa.h"

namespace ember {
namespace lite {

// The polynomials' coefficients (Cephes' expf, tanhf, erff and erfcf), highest degree first, for
// Horner (below) and vec_math_avx512.h's Horner16.
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;  // ln2 = kLn2Hi + kLn2Lo
constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                               4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
constexpr float kTanhPoly[5] = {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                                1.33314422036e-1f, -3.33332819422e-1f};
// 1 + erf(t) = 1 + t T(t^2) for |t| < 1.
constexpr float kErfPoly[7] = {
    7.853861353153693e-5f, -8.010193625184903e-4f, 5.188327685732524e-3f, -2.685381193529856e-2f,
    1.128358514861418e-1f, -3.761262582423300e-1f, 1.128379165726710e0f};
// erfc(a) = e^(-a^2) / a P(1 / a^2): P for 1 <= a < 2, then for a >= 2.
constexpr float kErfcNearPoly[9] = {
    2.326819970068386e-2f,  -1.387039388740657e-1f, 3.687424674597105e-1f,
    -5.824733027278666e-1f, 6.210004621745983e-1f,  -4.944515323274145e-1f,
    3.404879937665872e-1f,  -2.741127028184656e-1f, 5.638259427386472e-1f};
constexpr float kErfcFarPoly[8] = {
    -1.047766399936249e1f, 1.297719955372516e1f,  -7.495518717768503e0f,  2.921019019210786e0f,
    -1.015265279202700e0f, 4.218463358204948e-1f, -2.820767439740514e-1f, 5.641895067754075e-1f};

// c[0] x^(N-1) + ... + c[N-1] by Horner's rule (the loop unrolls: N is a constant).
template <int N>
EMBER_LOOP_BODY float Horner(float x, const float (&c)[N]) {
  float p = c[0];
  for (int i = 1; i < N; ++i) p = p * x + c[i];
  return p;
}

// e^r for the remainder r = c - n ln2 (Cody-Waite: ln2 in two parts), n = round(c / ln2), |r| <=
// ln2 / 2: Cephes' degree-6 polynomial. ExpF and ExpNonPositiveF scale it by 2^n.
EMBER_LOOP_BODY float ExpOfRemainder(float c, float n) {
  float r = c - n * kLn2Hi;
  r = r - n * kLn2Lo;
  return Horner(r, kExpPoly) * r * r + r + 1.0f;
}

// e^x within 1 ulp of std::exp (NaN in, NaN out; below -87.3, where e^x is a denormal, 0; above
// 88.7, infinity), in branch-free float arithmetic that the compiler vectorizes: a softmax row
// of 1000 classes took 4 us with std::exp. Cody-Waite reduction x = n ln2 + r, |r| <= ln2 / 2,
// then Cephes' degree-6 polynomial for e^r, scaled by 2^n through the exponent bits.
EMBER_LOOP_BODY float ExpF(float x) {
  const float c = std::min(88.7f, std::max(-87.3f, x));  // NaN stays NaN below
  // n = round(c / ln2): adding 1.5 * 2^23 leaves the rounded integer in the low mantissa bits.
  const float shifted = c * 1.44269504088896341f + 12582912.0f;
  const float er = ExpOfRemainder(c, shifted - 12582912.0f);
  int32_t bits;
  std::memcpy(&bits, &shifted, sizeof(bits));
  // The low bits of `shifted` are n (two's complement), in [-126, 128]: 2^n as 2^h * 2^(n - h),
  // h = n / 2, each a normal float (2^128 is not), so e = er * 2^n with one rounding.
  const int32_t n_int = bits - 0x4B400000;
  const int32_t h = n_int / 2;
  const int32_t s1_bits = static_cast<int32_t>(static_cast<uint32_t>(h + 127) << 23);
  const int32_t s2_bits = static_cast<int32_t>(static_cast<uint32_t>(n_int - h + 127) << 23);
  float s1, s2;
  std::memcpy(&s1, &s1_bits, sizeof(s1));
  std::memcpy(&s2, &s2_bits, sizeof(s2));
  const float e = (er * s1) * s2;
  const float big = x > 88.7f ? std::numeric_limits<float>::infinity() : e;
  return x != x ? x : (x < -87.3f ? 0.0f : big);
}

// e^x for x <= 0 (a softmax's x - max, a sigmoid's -|x|), as ExpF (the same reduction and
// polynomial, 0 below -87.3, NaN in, NaN out) in about half its operations: n = round(x / ln2)
// lies in [-126, 0], so 2^n is one normal float whose exponent bits come from `shifted`'s low
// bits by one shift (the rounding constant carries the bias 127). Above 0 its result is wrong.
EMBER_LOOP_BODY float ExpNonPositiveF(float x) {
  const float c = std::max(x, -87.3f);                           // NaN stays NaN
  const float shifted = c * 1.44269504088896341f + 12583039.0f;  // 1.5 * 2^23 + 127
  const float er = ExpOfRemainder(c, shifted - 12583039.0f);
  uint32_t bits;
  std::memcpy(&bits, &shifted, sizeof(bits));
  bits <<= 23;  // (n + 127) << 23: 2^n
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  const float e = er * scale;
  return x < -87.3f ? 0.0f : e;
}

// tanh(x) as Cephes' tanhf: for |x| <= 0.625 an odd polynomial, x + x^3 P(x^2); beyond,
// (1 - e) / (1 + e) with e = e^(-2|x|) and x's sign (1 once e is 0). NaN in, NaN out.
EMBER_LOOP_BODY float TanhF(float x) {
  const float ax = x < 0.0f ? -x : x;
  const float z = x * x;
  const float small = Horner(z, kTanhPoly) * z * x + x;
  const float e = ExpNonPositiveF(-2.0f * ax);
  const float big = (1.0f - e) / (1.0f + e);
  const float signed_big = x < 0.0f ? -big : big;
  return ax <= 0.625f ? small : signed_big;
}

// 1 / (1 + e^-x) with LiteRT's reference cutoffs (its LOGISTIC): 1 above 16.619047, e^x below
// -9. One exponential, of -|x|: 1 / (1 + e) for x >= 0, e / (1 + e) below. NaN in, NaN out.
EMBER_LOOP_BODY float LogisticF(float x) {
  const float e = ExpNonPositiveF(x < 0.0f ? x : -x);
  const float r = 1.0f / (1.0f + e);
  const float mid = x < 0.0f ? e * r : r;
  return x > 16.619047164916992188f ? 1.0f : (x < -9.0f ? e : mid);
}

// 1 + erf(t), after Cephes' erff / erfcf: for |t| < 1, 1 + t T(t^2); beyond, with
// c = erfc(|t|) = e^(-t^2) / |t| P(1 / t^2) (one polynomial below |t| = 2, another above),
// 2 - c for t > 0 and c itself for t < 0 (no cancellation there). NaN in, NaN out.
EMBER_LOOP_BODY float OnePlusErfF(float t) {
  const float a = t < 0.0f ? -t : t;
  const float z = t * t;
  const float small = 1.0f + t * Horner(z, kErfPoly);
  const float q = 1.0f / std::max(a, 1.0f);
  const float y = q * q;
  const float p = Horner(y, kErfcNearPoly);
  const float r = Horner(y, kErfcFarPoly);
  const float c = ExpNonPositiveF(-z) * q * (a < 2.0f ? p : r);
  const float big = t > 0.0f ? 2.0f - c : c;
  return a < 1.0f ? small : (t != t ? t : big);
}

}  // namespace lite
}  // namespace ember

#endif  // EMBER_SRC_LITE_VEC_MATH_H_
