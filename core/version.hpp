// The build's git revision, for every result's context (a run can be reproduced).
// Generated at configure time into one source file (core/version.cpp.in), so a new
// commit rebuilds that file alone, not everything that would see a compile definition.
#pragma once

namespace rdmasweep {

const char* git_revision();

}  // namespace rdmasweep
