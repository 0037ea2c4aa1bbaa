// LiveViewPage.swift
//
// The live view's one page: HTML, CSS and script in a single response, no external assets (it
// works on a network without the internet), laid out for a phone as well as a desktop.
//
// Its one <style> and one <script> carry a nonce made for each response, which the response's
// Content-Security-Policy names: nothing else may run, not even markup that slipped past the
// script's escaping. The script sets styles only through the DOM (`.style.width`), which the
// policy allows, never through `style=` attributes, which it would block.

/// The page `--http` serves at `/`.
enum LiveViewPage {
    /// The page with `nonce` on its style and script elements. With `controlToken` (a view with
    /// `--http-control`) it carries the token in a `<meta>` element and shows the take's buttons;
    /// the script sends the token in a header with each control request. Only this page can read
    /// it: another site's page cannot read a response from this origin.
    static func html(nonce: String, controlToken: String? = nil) -> String {
        let meta = controlToken.map { "<meta name=\"jackhost-control\" content=\"\(attribute($0))\">" } ?? ""
        return template.replacing(nonceMark, with: nonce).replacing(controlMark, with: meta)
    }

    /// `text` safe inside a double-quoted HTML attribute.
    static func attribute(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("\"", with: "&quot;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }

    /// Where ``template`` takes the control token's `<meta>` element (nothing on a read-only view).
    static let controlMark = "@CONTROL@"

    /// The Content-Security-Policy for a page made with `nonce`: its own inline style and script,
    /// its event stream (`connect-src 'self'`), and nothing else (no images, frames, forms, base).
    static func policy(nonce: String) -> String {
        "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; connect-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// 128 random bits in hex, for one response (the system generator: getrandom(2) on Linux).
    static func newNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        let halves = [generator.next(), generator.next()] as [UInt64]
        return halves.map { half in
            let hex = String(half, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Where ``template`` takes the nonce.
    static let nonceMark = "@NONCE@"

    /// The page, with ``nonceMark`` where each response's nonce goes.
    static let template = #"""
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">@CONTROL@
        <title>jackhost live view</title>
        <style nonce="@NONCE@">
        :root{--bg:#111418;--panel:#1b2027;--fg:#e6e9ee;--dim:#8b95a3;--ok:#3ccf6e;--warn:#e8c33a;--bad:#f0483e}
        *{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.35 system-ui,sans-serif}
        header{display:flex;flex-wrap:wrap;gap:.3em 1em;align-items:baseline;padding:.6em .8em;background:var(--panel)}
        header h1{font-size:1.05em;margin:0}header span{color:var(--dim)}
        main{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:.8em;padding:.8em}
        @media (max-width:760px){main{grid-template-columns:minmax(0,1fr)}}
        section{background:var(--panel);border-radius:6px;padding:.6em .7em;min-width:0}
        h2{font-size:.85em;text-transform:uppercase;letter-spacing:.06em;color:var(--dim);margin:0 0 .5em}
        .meter{display:grid;grid-template-columns:minmax(4em,9em) 1fr 7.5em 1.1em;gap:.5em;align-items:center;margin:.25em 0}
        .label{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
        .bar{position:relative;height:14px;background:#0b0d10;border-radius:3px;overflow:hidden}
        .rms{position:absolute;left:0;top:0;bottom:0;background:linear-gradient(90deg,var(--ok) 70%,var(--warn) 88%,var(--bad))}
        .pk{position:absolute;top:0;bottom:0;width:2px;background:#fff8}.hold{position:absolute;top:0;bottom:0;width:2px;background:var(--warn)}
        .val{font-variant-numeric:tabular-nums;color:var(--dim);font-size:.85em;text-align:right;white-space:nowrap}
        .clip{width:1em;height:1em;border-radius:50%;background:#3a1614;cursor:pointer}.clip.on{background:var(--bad);box-shadow:0 0 6px var(--bad)}
        canvas{width:100%;height:220px;display:block;background:#0b0d10;border-radius:3px}
        table{border-collapse:collapse;width:100%}td,th{padding:.15em .4em;text-align:left;vertical-align:top}th{color:var(--dim);font-weight:normal}
        td.n{text-align:right;font-variant-numeric:tabular-nums}.bad{color:var(--bad)}
        select{background:#0b0d10;color:var(--fg);border:1px solid #333;border-radius:3px;padding:.2em}
        #status.down{color:var(--bad)}small{color:var(--dim)}
        #control{display:none;flex-wrap:wrap;gap:.4em;align-items:center}#control.on{display:flex}
        #control button{background:#0b0d10;color:var(--fg);border:1px solid #333;border-radius:4px;padding:.45em .9em;font:inherit;cursor:pointer}
        #control button#record{border-color:var(--bad)}#control input{background:#0b0d10;color:var(--fg);border:1px solid #333;border-radius:3px;padding:.4em;min-width:8em;flex:1}
        #take-state{font-weight:bold}#take-state.recording{color:var(--bad)}#control-reply{color:var(--dim)}
        #alarms{display:none;background:var(--bad);color:#fff;font-weight:bold;padding:.5em .8em}#alarms.on{display:block}
        #loudness-section{display:none}#loudness-section.on{display:block}#loudness-history{height:160px}
        </style></head><body>
        <header><h1>jackhost</h1><span id="server">connecting…</span><span id="clock"></span><span id="status">…</span></header>
        <section id="control" aria-label="take control"><span>take: <span id="take-state">…</span></span>
        <button id="record" type="button">● Record</button><button id="stop" type="button">■ Stop</button>
        <button id="rotate" type="button">Rotate</button><input id="marker-label" maxlength="200" placeholder="marker label" aria-label="marker label">
        <button id="marker" type="button">Marker</button><small id="control-reply"></small></section>
        <div id="alarms" role="alert"></div>
        <main>
        <section id="levels"><h2>Levels <small>peak / RMS dBFS, tap a light to reset clips</small></h2><div id="meters"></div></section>
        <section><h2>Spectrum <select id="channel" aria-label="channel"></select> <small id="spectrum-peak"></small></h2><canvas id="spectrum" width="800" height="300"></canvas></section>
        <section><h2>Take</h2><table id="take"></table></section>
        <section><h2>Counters</h2><table id="counters"></table></section>
        <section><h2>Session</h2><table id="session"></table></section>
        <section><h2>Plugin results</h2><table id="results"></table></section>
        <section id="loudness-section"><h2>Loudness <small>EBU R128: LUFS, LU, dBTP; short-term over the last 10 minutes</small></h2><table id="loudness"></table><canvas id="loudness-history" width="800" height="240"></canvas></section>
        </main>
        <script nonce="@NONCE@">
        "use strict";
        const $=id=>document.getElementById(id), params=new URLSearchParams(location.search), token=params.get("token");
        let channel=+(params.get("channel")||0), source=null, holds=[], clipBase=[], count=0, rate=0, lastData=0;
        const esc=s=>String(s).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
        const pct=db=>db==null?0:Math.max(0,Math.min(100,(db+60)/60*100));
        const fmt=db=>db==null?"-inf":db.toFixed(1);
        const dur=s=>{if(s==null)return"—";s=Math.floor(s);const h=Math.floor(s/3600),m=Math.floor(s/60)%60;return(h?h+"h ":"")+(h||m?m+"m ":"")+s%60+"s"};
        const size=b=>{const u=["B","KiB","MiB","GiB","TiB"];let i=0;while(b>=1024&&i<4){b/=1024;i++}return(i?b.toFixed(1):b)+" "+u[i]};
        function connect(){
          if(source)source.close();
          source=new EventSource("events?channel="+channel+(token?"&token="+encodeURIComponent(token):""));
          source.onmessage=e=>{count++;lastData=Date.now();update(JSON.parse(e.data))};
          source.onerror=()=>{$("status").textContent="reconnecting…";$("status").className="down"};
        }
        $("channel").onchange=e=>{channel=+e.target.value;connect()};
        setInterval(()=>{rate=count;count=0;const live=Date.now()-lastData<1500;$("status").textContent=live?rate+" updates/s":"no data";$("status").className=live?"":"down";$("status").dataset.rate=rate},1000);
        function meters(inputs){
          const box=$("meters");
          if(box.children.length===inputs.length){inputs.forEach((p,i)=>{box.children[i].querySelector(".label").textContent=p.label;box.children[i].title=p.port});return}
          box.innerHTML=inputs.map((p,i)=>`<div class="meter" data-channel="${i}" title="${esc(p.port)}"><div class="label">${esc(p.label)}</div><div class="bar"><div class="rms"></div><div class="pk"></div><div class="hold"></div></div><div class="val"></div><div class="clip" title="clipped samples"></div></div>`).join("");
          [...box.querySelectorAll(".clip")].forEach((c,i)=>c.onclick=()=>{clipBase[i]=+(c.dataset.clips||0)});
          $("channel").innerHTML=inputs.map((p,i)=>`<option value="${i}"${i===channel?" selected":""}>${i+1}: ${esc(p.label)}</option>`).join("");
        }
        function row(k,v,cls){return`<tr><th>${esc(k)}</th><td class="${cls||""}">${v}</td></tr>`}
        function update(d){
          const s=d.session;
          if(s){$("server").textContent=`server ${s.server} · ${s.rate} Hz · period ${s.period} frames (${(s.period/s.rate*1000).toFixed(1)} ms) · ${s.inputs.length} inputs`;
            meters(s.inputs);
            $("session").innerHTML=row("server",esc(s.server))+row("sample rate",s.rate+" Hz")+row("period",s.period+" frames")+row("capture latency",s.latency+" frames")+
              s.inputs.map(p=>row(p.port,esc(p.label)+"<br><small>"+(p.connections.length?p.connections.map(esc).join(", "):"not connected")+"</small>")).join("");}
          $("clock").textContent=dur(d.seconds)+" captured";
          const now=Date.now(), rows=$("meters").children;
          d.levels.forEach((l,i)=>{const m=rows[i];if(!m)return;const [pk,rms,clips]=l;
            const h=holds[i]||{db:null,t:0};if(pk!=null&&(h.db==null||pk>=h.db||now-h.t>2000)){holds[i]={db:pk,t:now}}
            m.dataset.peak=pk==null?"-inf":pk;m.dataset.rms=rms==null?"-inf":rms;m.dataset.overallPeak=l[3]==null?"-inf":l[3];m.dataset.overallRms=l[4]==null?"-inf":l[4];
            m.querySelector(".rms").style.width=pct(rms)+"%";m.querySelector(".pk").style.left=pct(pk)+"%";m.querySelector(".hold").style.left=pct(holds[i].db)+"%";
            m.querySelector(".val").textContent=fmt(pk)+" / "+fmt(rms);
            const c=m.querySelector(".clip");c.dataset.clips=clips;c.classList.toggle("on",clips>(clipBase[i]||0));c.title=clips+" clipped samples";});
          $("counters").innerHTML=row("xruns",`<span id="xruns" data-value="${d.xruns}">${d.xruns}</span>`,d.xruns?"bad":"")+
            row("skipped frames",`<span id="skipped" data-value="${d.skipped}">${d.skipped}</span>`,d.skipped?"bad":"")+
            d.consumers.map(c=>row(`${c.name} #${c.index}`,`<span class="dropped" data-value="${c.dropped}">${c.dropped}</span> dropped · ${c.buffered.toFixed(2)} s buffered`,c.dropped||c.abandoned?"bad":"")).join("");
          const t=d.take;
          $("take").innerHTML=t?row("take",esc(t.name))+row("file",esc(t.file)+(t.files>1?` <small>(${t.files} files)</small>`:""))+row("size",size(t.bytes))+
            row("length",`<span id="take-seconds" data-value="${t.seconds}">${dur(t.seconds)}</span>`)+row("disk left",t.secondsLeft==null?"—":"about "+dur(t.secondsLeft)+" of recording")+
            row("markers",`<span id="marker-count" data-value="${t.markers.count}">${t.markers.count}</span>`+t.markers.last.map(m=>`<br><small class="marker" data-label="${esc(m.label)}" data-source="${esc(m.source)}">${esc(m.label)} · ${m.seconds.toFixed(2)} s · ${esc(m.source)}</small>`).reverse().join("")):row("take","not recording");
          $("results").innerHTML=d.results.length?d.results.map(r=>r.values.map(v=>row(`${r.plugin} #${r.instance} ${v.name}`,`<span class="result" data-plugin="${esc(r.plugin)}" data-name="${esc(v.name)}" data-value="${v.value??""}">${esc(v.text)}</span>`+(v.unit?" "+esc(v.unit):""))).join("")).join(""):row("","none");
          if(d.control)setState(d.control.state);
          if(d.spectrum)spectrum(d.spectrum);
          const al=$("alarms");al.className=d.alarms.length?"on":"";al.dataset.count=d.alarms.length;al.innerHTML=d.alarms.map(a=>"ALARM "+esc(a)).join("<br>");
          if(d.loudness)loudness(d.loudness,d.loudnessHistory);
        }
        function loudness(ms,history){
          $("loudness-section").className="on";
          const v=x=>x==null?"—":x.toFixed(1);
          $("loudness").innerHTML="<tr><th></th><th>M</th><th>S</th><th>I</th><th>LRA</th><th>TP</th></tr>"+ms.map(m=>`<tr class="lufs" data-name="${esc(m.name)}" data-integrated="${m.integrated??""}" data-true-peak="${m.truePeak??""}"><th>${esc(m.name)}</th><td class="n">${v(m.momentary)}</td><td class="n">${v(m.shortTerm)}</td><td class="n">${v(m.integrated)}</td><td class="n">${v(m.range)} LU</td><td class="n">${v(m.truePeak)} dBTP</td></tr>`).join("");
          if(!history)return;
          const cv=$("loudness-history"),g=cv.getContext("2d"),W=cv.width,H=cv.height,y=l=>(-l/60)*H,colors=["#3ccf6e","#4aa3ff","#f2b233","#e5484d","#b58cff","#8b95a3"];
          g.fillStyle="#0b0d10";g.fillRect(0,0,W,H);g.strokeStyle="#2a313b";g.fillStyle="#8b95a3";g.font="18px sans-serif";
          for(const l of[-10,-23,-30,-40,-50]){g.beginPath();g.moveTo(0,y(l));g.lineTo(W,y(l));g.stroke();g.fillText(l,3,y(l)-3)}
          cv.dataset.points=history.map(h=>h.length).join(",");
          history.forEach((h,i)=>{g.strokeStyle=colors[i%colors.length];g.lineWidth=2;g.beginPath();let on=false;
            h.forEach((l,k)=>{const x=W-(h.length-1-k)*W/600;if(l==null){on=false;return}on?g.lineTo(x,y(l)):g.moveTo(x,y(l));on=true});g.stroke()});
        }
        function spectrum(sp){
          const cv=$("spectrum"),g=cv.getContext("2d"),W=cv.width,H=cv.height,raw=atob(sp.bins),n=raw.length,nyq=sp.rate/2;
          const fx=f=>Math.log(f/20)/Math.log(nyq/20)*W, dby=db=>(-db/120)*H;
          g.fillStyle="#0b0d10";g.fillRect(0,0,W,H);g.strokeStyle="#2a313b";g.fillStyle="#8b95a3";g.font="20px sans-serif";
          for(const f of[50,100,200,500,1000,2000,5000,10000,20000]){if(f>=nyq)break;const x=fx(f);g.beginPath();g.moveTo(x,0);g.lineTo(x,H);g.stroke();g.fillText(f>=1000?f/1000+"k":f,x+3,H-6)}
          for(let db=-20;db>-120;db-=20){const y=dby(db);g.beginPath();g.moveTo(0,y);g.lineTo(W,y);g.stroke();g.fillText(db,3,y-3)}
          let best=2,bestDb=-999;g.strokeStyle="#3ccf6e";g.lineWidth=2;g.beginPath();
          for(let k=1;k<n;k++){const db=raw.charCodeAt(k)*140/255-140,x=fx(k*sp.rate/sp.size);if(k>=2&&db>bestDb){bestDb=db;best=k}k===1?g.moveTo(x,dby(db)):g.lineTo(x,dby(db))}
          g.stroke();const hz=best*sp.rate/sp.size,el=$("spectrum-peak");el.dataset.hz=hz;el.dataset.binHz=sp.rate/sp.size;el.dataset.channel=sp.channel;
          el.textContent=`peak ${hz.toFixed(0)} Hz, ${bestDb.toFixed(1)} dB (bins of ${(sp.rate/sp.size).toFixed(1)} Hz)`;
        }
        const controlMeta=document.querySelector('meta[name="jackhost-control"]');
        if(controlMeta){
          $("control").className="on";
          const act=async(action,label)=>{
            const q=action==="marker"&&label?"?label="+encodeURIComponent(label):"";
            try{const r=await fetch("api/"+action+q,{method:"POST",headers:{"X-JackHost-Token":controlMeta.content}}),j=await r.json();
              $("control-reply").textContent=j.ok?action+": "+j.state:j.error;$("control-reply").dataset.status=r.status;
              if(j.ok)setState(j.state)}catch(e){$("control-reply").textContent=action+": no answer";$("control-reply").dataset.status="0"}};
          for(const a of["record","stop","rotate"])$(a).onclick=()=>act(a==="record"?"start":a);
          $("marker").onclick=()=>{act("marker",$("marker-label").value);$("marker-label").value=""};
        }
        function setState(s){const el=$("take-state");el.textContent=s;el.dataset.state=s;el.className=s}
        connect();
        </script></body></html>
        """#
}
