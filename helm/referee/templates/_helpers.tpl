{{/* Names and labels shared by every template. */}}

{{- define "referee.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "referee.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "referee.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "referee.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "referee.selectorLabels" -}}
app.kubernetes.io/name: {{ include "referee.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "referee.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "referee.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Image reference; a digest wins over a tag. Call with (dict "root" $ "image" $img). */}}
{{- define "referee.image" -}}
{{- $img := .image -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $img.repository $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $img.repository (default .root.Chart.AppVersion $img.tag) -}}
{{- end -}}
{{- end -}}

{{- define "referee.secretName" -}}
{{- default (printf "%s-secrets" (include "referee.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "referee.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "referee.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "referee.redisHost" -}}
{{- printf "%s-redis" (include "referee.fullname" .) -}}
{{- end -}}

{{/* Environment every referee container gets: the broker URL (bundled Redis: built from
     the password in the Secret via $(VAR) expansion; external: the whole URL from the
     Secret, since it carries credentials). */}}
{{- define "referee.brokerEnv" -}}
{{- if .Values.redis.enabled }}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "referee.secretName" . }}
      key: {{ .Values.secrets.keys.redisPassword }}
- name: REFEREE_BROKER_URL
  value: {{ printf "redis://:$(REDIS_PASSWORD)@%s:6379/0" (include "referee.redisHost" .) | quote }}
{{- else }}
- name: REFEREE_BROKER_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "referee.secretName" . }}
      key: {{ .Values.secrets.keys.brokerUrl }}
{{- end }}
{{- end -}}

{{/* Container security context shared by gateway and workers; .extra merges over it. */}}
{{- define "referee.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/* Checksum of the ConfigMap, so a settings change rolls the pods. */}}
{{- define "referee.configChecksum" -}}
checksum/config: {{ include (print .Template.BasePath "/config/configmap.yaml") . | sha256sum }}
{{- end -}}

{{/* NetworkPolicy egress rules of a pod that may reach only DNS and the broker. */}}
{{- define "referee.egressToBroker" -}}
# Cluster DNS, to resolve the Redis service name.
- to:
    - namespaceSelector:
        {{- toYaml .Values.networkPolicy.dns.namespaceSelector | nindent 8 }}
      podSelector:
        {{- toYaml .Values.networkPolicy.dns.podSelector | nindent 8 }}
  ports:
    - {protocol: UDP, port: 53}
    - {protocol: TCP, port: 53}
{{- if .Values.redis.enabled }}
# The bundled Redis.
- to:
    - podSelector:
        matchLabels:
          {{- include "referee.selectorLabels" . | nindent 10 }}
          app.kubernetes.io/component: redis
  ports:
    - {protocol: TCP, port: 6379}
{{- else }}
# The external Redis.
- ports:
    - {protocol: TCP, port: {{ .Values.redis.external.port }}}
  {{- with .Values.redis.external.cidrs }}
  to:
    {{- range . }}
    - ipBlock: {cidr: {{ . | quote }}}
    {{- end }}
  {{- end }}
{{- end }}
{{- end -}}
