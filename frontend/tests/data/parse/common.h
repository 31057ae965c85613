#pragma once
#define CLAMP01(x) clamp((x), 0.0f, 1.0f)
#define LERP(a, b, t) ((a) + ((b) - (a)) * (t))
#define STR(x) #x
#define CAT(a, b) a##b
#define VEC(t, n) CAT(t, n)
#define FOR_N(i, n) for (uint i = 0; i < (n); ++i)
#define LOG(fmt, ...) log_values(fmt, ##__VA_ARGS__)
