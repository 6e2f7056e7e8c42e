#include "tensorfiles/npy_header.hpp"

#include <optional>

#include "tensorfiles/detail.hpp"

namespace pecheck::tensorfiles::detail {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

/// Key-directed: each key's value has its own rule and none of them recurses, so hostile input
/// cannot exhaust the stack.
class DictParser {
 public:
  DictParser(std::string_view text, std::string_view name, bool python2_longs)
      : text_(text), name_(name), python2_longs_(python2_longs) {}

  NpyHeader parse() {
    NpyHeader h;
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    skip_space();
    expect('{', "the header to start with '{'");
    for (;;) {
      skip_space();
      if (eat('}')) break;
      const std::string key = string_literal("a quoted key or '}'");
      skip_space();
      expect(':', fmt::format("':' after key {}", quote_text(key)));
      skip_space();
      if (key == "descr") {
        mark_seen(seen_descr, key);
        h.descr = descr_value();
      } else if (key == "fortran_order") {
        mark_seen(seen_fortran, key);
        h.fortran_order = bool_value(key);
      } else if (key == "shape") {
        mark_seen(seen_shape, key);
        h.shape = shape_value();
      } else {
        fail(name_, "unexpected key {} in header (expected descr, fortran_order, shape)", quote_text(key));
      }
      skip_space();
      if (eat('}')) break;
      expect(',', "',' or '}' after a value");
    }
    skip_space();
    if (pos_ != text_.size()) malformed("only padding after the closing '}'");
    if (!seen_descr) fail(name_, "header has no 'descr' key");
    if (!seen_fortran) fail(name_, "header has no 'fortran_order' key");
    if (!seen_shape) fail(name_, "header has no 'shape' key");
    return h;
  }

 private:
  [[noreturn]] void malformed(std::string_view expected) {
    const std::string found = pos_ < text_.size() ? quote_text(text_.substr(pos_, 12)) : "the end";
    fail(name_, "malformed header dict at offset {}: expected {}, found {}", pos_, expected, found);
  }

  void mark_seen(bool& seen, const std::string& key) {
    if (seen) fail(name_, "duplicate key {} in header", quote_text(key));
    seen = true;
  }

  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }
  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool eat(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  void expect(char c, std::string_view expected) {
    if (!eat(c)) malformed(expected);
  }

  /// 'text' or "text" without escapes (numpy never writes any).
  std::string string_literal(std::string_view expected) {
    if (!peek('\'') && !peek('"')) malformed(expected);
    const char quote = text_[pos_++];
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' || text_[pos_] == '\n') malformed("a string without escapes or line breaks");
      ++pos_;
    }
    if (pos_ == text_.size()) malformed("a closing quote");
    return std::string(text_.substr(begin, pos_++ - begin));
  }

  std::string descr_value() {
    if (peek('[')) fail(name_, "structured dtypes (a list as descr) are not supported");
    return string_literal("a quoted descr such as '<f4'");
  }

  bool bool_value(const std::string& key) {
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && (is_alpha(text_[pos_]) || is_digit(text_[pos_]))) ++pos_;
    const std::string_view word = text_.substr(begin, pos_ - begin);
    if (word == "True") return true;
    if (word == "False") return false;
    pos_ = begin;
    malformed(fmt::format("True or False as {}", quote_text(key)));
  }

  /// A tuple: (), (5,), (2, 3) or (2, 3,). "(5)" is an int in Python, so it is rejected.
  std::vector<std::int64_t> shape_value() {
    if (!peek('(')) malformed("a tuple such as (2, 3) as 'shape'");
    ++pos_;
    std::vector<std::int64_t> shape;
    bool comma_after_last = false;
    for (;;) {
      skip_space();
      if (eat(')')) break;
      if (shape.size() == kMaxDims) fail(name_, "shape has more than {} dims", kMaxDims);
      shape.push_back(dim());
      skip_space();
      comma_after_last = eat(',');
      if (!comma_after_last) {
        skip_space();
        expect(')', "',' or ')' in the shape tuple");
        break;
      }
    }
    if (shape.size() == 1 && !comma_after_last)
      fail(name_, "shape ({}) is an int, not a tuple (a 1-d shape is written ({},))", shape[0], shape[0]);
    return shape;
  }

  std::int64_t dim() {
    const std::size_t begin = pos_;
    const bool negative = eat('-');
    std::uint64_t v = 0;
    bool overflow = false;
    const std::size_t digits = pos_;
    while (pos_ < text_.size() && is_digit(text_[pos_])) {
      overflow |= __builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, unsigned(text_[pos_] - '0'), &v);
      ++pos_;
    }
    if (pos_ == digits) malformed("an integer dimension");
    if (peek('.') || peek('e') || peek('E')) fail(name_, "non-integer dimension in shape");
    if (python2_longs_ && (peek('L') || peek('l'))) ++pos_;
    const std::string_view text = text_.substr(begin, pos_ - begin);
    if (negative) fail(name_, "negative dimension {} in shape", quote_text(text));
    if (overflow || v > static_cast<std::uint64_t>(INT64_MAX))
      fail(name_, "dimension {} is too large", quote_text(text));
    return static_cast<std::int64_t>(v);
  }

  std::string_view text_;
  std::string_view name_;
  bool python2_longs_;
  std::size_t pos_ = 0;
};

}  // namespace

NpyHeader parse_npy_header(std::string_view text, std::string_view name, bool python2_longs) {
  return DictParser(text, name, python2_longs).parse();
}

}  // namespace pecheck::tensorfiles::detail
