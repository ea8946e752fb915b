#include "core/engine/send_credits.hpp"

#include "core/engine/loop_resources.hpp"
#include "core/verbs/errors.hpp"

namespace rdmasweep::detail {

CreditReads make_credit_reads(const LoopResources& r) {
  CreditReads cr;
  if (r.send_credit == 0) return cr;
  if (r.remote.credit_rkey == 0)
    throw verbs::Error("the peer grants no READ of its receive count, which SEND on iWARP needs: run the same rdmasweep "
                "version on both sides");
  const uint32_t nqp = static_cast<uint32_t>(r.qps.size());
  cr.window = r.send_credit;
  cr.reserve = posts_receives(r.cfg, r.role) ? effective_signal_every(r.cfg) : 1;  // read_fits
  cr.landed = r.credit_landing();
  cr.wr.assign(nqp, ibv_send_wr{});
  cr.sge.assign(nqp, ibv_sge{});
  for (uint32_t q = 0; q < nqp; ++q) {
    cr.wr[q] = credit_read(q, &cr.sge[q], r.credit_landing(), r.credit_mr.lkey(), r.remote.credit_addr,
                           r.remote.credit_rkey);
    cr.in_flight += r.sq[q].reading;
  }
  return cr;
}

}  // namespace rdmasweep::detail
