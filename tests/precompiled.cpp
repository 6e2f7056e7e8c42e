// The object the tests' precompiled header (precompiled.hpp) is made with.
