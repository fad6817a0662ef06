# A mirror of narrow-balanced.patch's schedule (step 14, 192-wide tiles in clusters of two): step 11's
# rule and Jobs pick the tail; the tail's bounds are water-filled by cost (a wide K-tile 6, a narrow
# one COST64 = 3 or COST128 = 5). check() walks every cluster's waves and asserts that every K-tile
# of every job is taken once, that every finishing piece's peers left partials of its job, that
# every partial is added, and that every cluster has some of the tail. The busiest cluster's load
# counts a narrow K-tile as half a wide one. Run: python3 narrow-balanced-mirror.py
import random
BM,BN,CL,G=128,192,2,8
def cdiv(a,b): return -(-a//b)
def job_origin_col(job,M,N):
    cols=cdiv(N,BN); rows=cdiv(cdiv(M,BM),CL)
    group=job//(G*cols); first=group*G; height=min(G,rows-first); ing=job%(G*cols)
    return cols-1-ing//height if group%2 else ing//height
class Sched:  # step 11 + Jobs
    def __init__(s,M,N,clusters,tiles,grid):
        s.clusters,s.tiles=clusters,tiles
        s.jobs=cdiv(cdiv(M,BM),CL)*cdiv(N,BN); t=s.jobs%clusters
        s.whole=s.jobs; s.tail=0
        if t>0 and (clusters-t)*tiles>=20*clusters and t*tiles>=2*clusters and grid*(BM//64)<=288:
            s.tail=t; s.whole=s.jobs-t
        s.units=s.whole
        if s.tail==0 and t>0 and s.jobs>clusters and t*tiles<2*clusters and (clusters-t)*tiles>=20*clusters and grid*(BM//64)<=288:
            s.tail=t+clusters; s.whole=s.jobs-s.tail; s.units=s.whole
    def begin(s,c): return c*s.tail*s.tiles//s.clusters
class Bal(Sched):
    def __init__(s,M,N,clusters,tiles,grid,c64=3,c128=5):
        super().__init__(M,N,clusters,tiles,grid); s.M,s.N=M,N
        nw=cdiv(N%BN,64)*64; s.cn=c64 if nw==64 else c128
        s.balanced= nw>0 and nw<BN and s.tail>0 and clusters<=132
        s.kb=[s.begin(c) for c in range(clusters+1)]
        if s.balanced: s.balance()
    def cost(s,job): return s.cn if job_origin_col(job,s.M,s.N)==cdiv(s.N,BN)-1 else 6
    def own(s,c): return (s.units-1-c)//s.clusters+1 if c<s.units else 0
    def balance(s):
        load=[sum(s.cost(c+i*s.clusters)*s.tiles for i in range(s.own(c))) for c in range(s.clusters)]
        total=sum(s.cost(s.whole+j)*s.tiles for j in range(s.tail))
        lo,hi=min(load),max(load)
        filled=lambda x: sum(max(0,x-l) for l in load)
        a,z=lo,hi+total
        while a<z:
            x=a+(z-a)//2
            if filled(x)>=total: z=x
            else: a=x+1
        level,full=a,filled(a)
        s.level_ok = level-hi>=12
        if not s.level_ok: return
        out=[0]+[level-l for l in load]
        for c in range(1,s.clusters+1): out[c]+=out[c-1]
        kb=[]
        for c in range(s.clusters+1):
            at=out[c]*total//full; j=0; acc=0; cj=6
            while j<s.tail:
                cj=s.cost(s.whole+j)
                if at<acc+cj*s.tiles: break
                acc+=cj*s.tiles; j+=1
            kb.append(j*s.tiles+(at-acc)//cj if j<s.tail else s.tail*s.tiles)
        s.kb=kb
    def wave(s,c,i):
        own=s.own(c)
        if i<own: return (c+i*s.clusters,0,s.tiles,0,False)
        if s.tail==0: return None
        b,e=s.kb[c],s.kb[c+1]; t=s.tiles
        first,last=b//t,(e-1)//t; p=i-own
        if e<=b or p>last-first: return None
        leaves=e<(last+1)*t
        job=first if p==last-first else ((last if p==0 else first+p) if leaves else first+1+p)
        k0,k1=max(b,job*t),min(e,(job+1)*t); partial=k1<(job+1)*t; peers=0
        if not partial:
            while c-1-peers>=0 and s.kb[c-peers]>job*t: peers+=1
        return (s.whole+job,k0-job*t,k1-job*t,peers,partial)
def check(M,N,K,clusters=66,ratio=0.5,**kw):
    tiles=cdiv(K,128); s=Bal(M,N,clusters,tiles,clusters*CL,**kw)
    cover=set(); saved={}; fin=[]; load=[0.0]*clusters
    for c in range(clusters):
        i=0
        while True:
            w=s.wave(c,i)
            if w is None: break
            job,k0,k1,peers,partial=w
            assert 0<=job<s.jobs and 0<=k0<k1<=tiles,w
            for k in range(k0,k1): assert (job,k) not in cover; cover.add((job,k))
            load[c]+=(k1-k0)*(ratio if s.cost(job)!=6 else 1)
            if partial: assert c not in saved; saved[c]=job
            else: fin.append((c,job,peers))
            i+=1
    assert len(cover)==s.jobs*tiles
    for c,job,peers in fin:
        for j in range(1,peers+1): assert saved.get(c-j)==job,(M,N,K,c,job,peers)
    assert {c-j for c,job,peers in fin for j in range(1,peers+1)}==set(saved)
    if s.tail: assert all(s.kb[c+1]>s.kb[c] for c in range(clusters)),(M,N,K)
    return s,max(load)
if __name__=='__main__':
    for M,N,K in [(4096,4096,4096),(4096,11008,4096),(4096,7168,16384),(8192,8192,8192),(2048,11008,4096),(4096,4096,16384)]:
        s,ml=check(M,N,K)
        print(M,N,K,'tail',s.tail,'balanced',s.balanced,getattr(s,'level_ok',None),'max load (wide K-tiles)',round(ml,1),'ideal',round((sum(s.cost(j)*s.tiles for j in range(s.jobs))/6)/66,1))
    random.seed(2); n=0
    for _ in range(4000):
        M=random.randint(1,20000); N=random.randint(1,20000); K=random.randint(1,30000)
        check(M,N,K,clusters=random.choice([66,57,8,1,66])); n+=1
    print('random ok',n)
