// ROOT ends the whole process (abort()) on a Fatal message and on a failed R__ASSERT, and a
// damaged or foreign file reaches both: RNTuple's file reader asserts on a header it cannot
// parse (RMiniFile.cxx, "fLName != 255 violated") for one random 4 kB file in a few hundred.
// A measurement process, or the test run, must instead fail with one line naming the file, so
// an aborting message becomes a C++ exception: cppyy passes it to Python, where the adapter
// that called ROOT names the file (InputError). Other messages go to the handler installed
// before (PyROOT's, which turns warnings into Python warnings).
#include <TError.h>
#include <stdexcept>
#include <string>
namespace hepfmt_fatal {
inline ErrorHandlerFunc_t previous = nullptr;

inline void handler(int level, Bool_t abort, const char *location, const char *msg) {
  if (abort) {
    const std::string where = location && *location ? location : "ROOT";
    throw std::runtime_error(where + ": " + (msg ? msg : "fatal error"));
  }
  if (previous) previous(level, abort, location, msg);
  else DefaultErrorHandler(level, abort, location, msg);
}

inline void install() {
  if (GetErrorHandler() == &handler) return;
  previous = GetErrorHandler();
  SetErrorHandler(&handler);
}
}  // namespace hepfmt_fatal
