// The headers most test units parse (GoogleTest, RapidCheck, fmt and the standard library),
// compiled once for the whole test tree (tests/CMakeLists.txt): each test unit spent 2-4 s
// parsing them before its own code. Nothing here may define an object with a static initializer
// (Boost's MPFR type does: every test would then have to link MPFR).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>
