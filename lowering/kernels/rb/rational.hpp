// Exact rationals over __int128 for the host-side table and binding code: the coordinate map src = a*dst + b,
// the window choice and the nearest rounding are decided exactly, as semantics/ (Fractions) decides them.
// An operation that would overflow sets the thread's overflow flag and returns an approximation; the caller
// then redoes the whole computation in double (see taps.hpp). Host only: tables are built on the host and
// copied to a device.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace rb {

using i128 = __int128;

inline thread_local bool g_rat_overflow = false;

inline i128 i128_abs(i128 v) { return v < 0 ? -v : v; }

inline i128 i128_gcd(i128 a, i128 b) {
    a = i128_abs(a);
    b = i128_abs(b);
    while (b != 0) {
        i128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

// a / b rounded towards -inf (b > 0).
inline i128 floor_div(i128 a, i128 b) {
    i128 q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

struct Rat {
    i128 num = 0;
    i128 den = 1;  // > 0, gcd(num, den) == 1

    Rat() = default;
    Rat(int64_t v) : num(v), den(1) {}  // NOLINT: literals in the filter templates (N(1), N(5), ...)
    Rat(int v) : num(v), den(1) {}      // NOLINT

    static Rat of(i128 n, i128 d) {
        Rat r;
        if (d == 0) {
            g_rat_overflow = true;
            return r;
        }
        if (d < 0) {
            n = -n;
            d = -d;
        }
        i128 g = i128_gcd(n, d);
        if (g > 1) {
            n /= g;
            d /= g;
        }
        r.num = n;
        r.den = d;
        return r;
    }

    // The exact value of a finite double (every binary float is a dyadic rational); overflow if it does not
    // fit (|exponent| too large), then the caller falls back to double.
    static Rat from_double(double v) {
        if (!std::isfinite(v)) {
            g_rat_overflow = true;
            return Rat();
        }
        int e = 0;
        double m = std::frexp(v, &e);  // v = m * 2^e, 0.5 <= |m| < 1
        i128 mant = static_cast<i128>(std::ldexp(m, 53));
        e -= 53;
        if (e >= 0) {
            if (e > 60) {
                g_rat_overflow = true;
                return Rat();
            }
            return of(mant << e, 1);
        }
        // Strip trailing zero bits first so that small exponents stay representable.
        while (e < 0 && mant != 0 && (mant & 1) == 0) {
            mant >>= 1;
            ++e;
        }
        if (e < -120) {
            g_rat_overflow = true;
            return Rat();
        }
        return of(mant, i128(1) << (-e));
    }

    double to_double() const {
        // Correctly rounded while both parts fit in 53 bits (the usual case), as Python's float(Fraction).
        const i128 lim = i128(1) << 53;
        if (i128_abs(num) < lim && den < lim) return static_cast<double>(num) / static_cast<double>(den);
        return static_cast<double>(static_cast<long double>(num) / static_cast<long double>(den));
    }
};

inline i128 mul_checked(i128 a, i128 b) {
    i128 r;
    if (__builtin_mul_overflow(a, b, &r)) {
        g_rat_overflow = true;
        return 0;
    }
    return r;
}

inline i128 add_checked(i128 a, i128 b) {
    i128 r;
    if (__builtin_add_overflow(a, b, &r)) {
        g_rat_overflow = true;
        return 0;
    }
    return r;
}

inline Rat operator+(const Rat& x, const Rat& y) {
    i128 g = i128_gcd(x.den, y.den);
    i128 xd = x.den / g, yd = y.den / g;
    return Rat::of(add_checked(mul_checked(x.num, yd), mul_checked(y.num, xd)), mul_checked(x.den, yd));
}
inline Rat operator-(const Rat& x) { return Rat::of(-x.num, x.den); }
inline Rat operator-(const Rat& x, const Rat& y) { return x + (-y); }
inline Rat operator*(const Rat& x, const Rat& y) {
    i128 g1 = i128_gcd(x.num, y.den), g2 = i128_gcd(y.num, x.den);
    if (g1 == 0) g1 = 1;
    if (g2 == 0) g2 = 1;
    return Rat::of(mul_checked(x.num / g1, y.num / g2), mul_checked(x.den / g2, y.den / g1));
}
inline Rat operator/(const Rat& x, const Rat& y) {
    if (y.num == 0) {
        g_rat_overflow = true;
        return Rat();
    }
    return x * Rat::of(y.den, y.num);
}
inline bool operator<(const Rat& x, const Rat& y) {
    return mul_checked(x.num, y.den) < mul_checked(y.num, x.den);
}
inline bool operator<=(const Rat& x, const Rat& y) { return !(y < x); }
inline bool operator>(const Rat& x, const Rat& y) { return y < x; }
inline bool operator>=(const Rat& x, const Rat& y) { return !(x < y); }
inline bool operator==(const Rat& x, const Rat& y) { return x.num == y.num && x.den == y.den; }
inline bool operator!=(const Rat& x, const Rat& y) { return !(x == y); }

// The few operations the table and binding code needs, for both number types.
inline int64_t floor_of(const Rat& x) { return static_cast<int64_t>(floor_div(x.num, x.den)); }
inline int64_t ceil_of(const Rat& x) { return static_cast<int64_t>(-floor_div(-x.num, x.den)); }
inline int64_t floor_of(double x) { return static_cast<int64_t>(std::floor(x)); }
inline int64_t ceil_of(double x) { return static_cast<int64_t>(std::ceil(x)); }
inline double as_double(const Rat& x) { return x.to_double(); }
inline double as_double(double x) { return x; }
template <class N>
inline N half_of() { return N(1) / N(2); }

}  // namespace rb
