// What a loop's look outside costs where it runs: the TSC, the two clocks rdmasweep reads, a
// poll() on an idle TCP socket (the control channel's), and a bare system call, each the mean of 2,000.
// Built on the host: gcc -O2 -o build/lab-call-costs reports/figures/vs-perftest/lab-call-costs.c
#include <stdio.h>
#include <time.h>
#include <poll.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
#include <x86intrin.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC_RAW,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(void){
  enum{N=2000}; volatile unsigned long long s=0; double t0,t1; struct timespec ts;
  t0=now(); for(int i=0;i<N;i++) s+=__rdtsc(); t1=now(); printf("rdtsc %.0f ns\n",(t1-t0)/N);
  t0=now(); for(int i=0;i<N;i++){clock_gettime(CLOCK_MONOTONIC,&ts);s+=ts.tv_nsec;} t1=now(); printf("clock_gettime(MONOTONIC) %.0f ns\n",(t1-t0)/N);
  t0=now(); for(int i=0;i<N;i++){clock_gettime(CLOCK_THREAD_CPUTIME_ID,&ts);s+=ts.tv_nsec;} t1=now(); printf("clock_gettime(THREAD_CPUTIME) %.0f ns\n",(t1-t0)/N);
  int l=socket(AF_INET,SOCK_STREAM,0); struct sockaddr_in a={0}; a.sin_family=AF_INET; a.sin_addr.s_addr=htonl(0x7f000001);
  socklen_t al=sizeof a; bind(l,(void*)&a,al); listen(l,1); getsockname(l,(void*)&a,&al);
  int c=socket(AF_INET,SOCK_STREAM,0); connect(c,(void*)&a,al); int d=accept(l,0,0);
  t0=now(); for(int i=0;i<N;i++){struct pollfd p={d,POLLIN,0}; s+=poll(&p,1,0);} t1=now(); printf("poll(0) on an idle TCP socket %.0f ns\n",(t1-t0)/N);
  t0=now(); for(int i=0;i<N;i++){ s+=getppid(); } t1=now(); printf("getppid %.0f ns\n",(t1-t0)/N);
  (void)c; return (int)(s&1)*0;
}
